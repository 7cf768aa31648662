#include "spin_lock.hpp"

#include "work_state.hpp"

namespace meshcomm::detail {

void SpinLock::wait_and_lock() noexcept {
  for (unsigned spins = 0;; ++spins) {
    backoff(spins);
    if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire)) return;
  }
}

}  // namespace meshcomm::detail
