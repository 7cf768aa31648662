#include "new_input.hpp"

#include <cstring>

namespace meshcomm::perf {

void write_new_input(void* data, std::size_t bytes, std::uint32_t call) {
  auto* at = static_cast<std::byte*>(data);
  std::memset(at, static_cast<int>(1 + call % 120), bytes);
  for (std::size_t block = 0; block * kNewInputBlock + sizeof(std::uint16_t) <= bytes; ++block) {
    const auto word = static_cast<std::uint16_t>(0x3C00U | ((block + call * 977U) & 0x3FFU));
    std::memcpy(at + block * kNewInputBlock, &word, sizeof word);
  }
}

}  // namespace meshcomm::perf
