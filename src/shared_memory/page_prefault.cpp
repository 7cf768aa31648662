#include "page_prefault.hpp"

#include <unistd.h>

#include <cstdint>

namespace meshcomm::detail {

void prefault_for_reading(const std::byte* base, std::size_t bytes) noexcept {
  if (base == nullptr || bytes == 0) return;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto* first = reinterpret_cast<const volatile std::byte*>(base);
  (void)first[0];
  // The first byte of every later page: from the page boundary after base on.
  const std::size_t to_next_page = page - reinterpret_cast<std::uintptr_t>(base) % page;
  for (std::size_t offset = to_next_page; offset < bytes; offset += page) (void)first[offset];
}

}  // namespace meshcomm::detail
