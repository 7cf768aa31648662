#include "harness/reused_bytes.hpp"

#include <algorithm>
#include <utility>

namespace meshcomm::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kSpares = 0;
#else
/// The most this thread keeps between buffers: a case has at most two or three.
constexpr std::size_t kSpares = 4;
#endif

/// The memory of this thread's destroyed buffers, smallest first.
thread_local std::vector<std::vector<std::byte>> spares;

}  // namespace

ReusedBytes::ReusedBytes(std::size_t size) {
  const auto fits = std::find_if(spares.begin(), spares.end(), [&](const auto& spare) { return spare.capacity() >= size; });
  if (fits != spares.end()) {
    bytes_ = std::move(*fits);
    spares.erase(fits);
  }
  bytes_.assign(size, kUnwritten);
}

ReusedBytes::~ReusedBytes() {
  if (kSpares == 0 || bytes_.capacity() == 0) return;
  const auto at = std::find_if(spares.begin(), spares.end(),
                               [&](const auto& spare) { return spare.capacity() >= bytes_.capacity(); });
  spares.insert(at, std::move(bytes_));
  if (spares.size() > kSpares) spares.erase(spares.begin());
}

}  // namespace meshcomm::testing
