#include "plain_copy.hpp"

#include <cstring>

#include "sse2_line_copy.hpp"

namespace meshcomm::detail {

void plain_copy(void* to, const void* from, std::size_t bytes) noexcept {
  auto* destination = static_cast<std::byte*>(to);
  const auto* source = static_cast<const std::byte*>(from);
  std::size_t done = 0;
#if defined(__x86_64__)
  // Never `rep movsb`: the lines with vector moves, the last partial line with memcpy.
  if (bytes >= kOutOfStepCopyFrom && out_of_step(to, from)) {
    done = copy_lines_sse2<LineStores::plain>(destination, source, bytes);
  }
#endif
  std::memcpy(destination + done, source + done, bytes - done);
}

}  // namespace meshcomm::detail
