#pragma once

// A lock for the short critical sections of a per-call path.

#include <atomic>

namespace meshcomm::detail {

/// A lock taken with one atomic exchange when it is free, inline: std::mutex costs two calls
/// into libc per section, which beside an NCCL call is a measurable part of meshcomm's overhead.
/// A thread that finds it taken spins, then yields, then sleeps in short steps (backoff() in
/// work_state.hpp), so a long holder (a communicator being created) costs waiters little CPU.
/// Not recursive. Meets Lockable, for std::lock_guard and std::unique_lock.
class SpinLock {
 public:
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]] return;
    wait_and_lock();
  }
  /// Takes the lock if it is free; false if another holds it.
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  /// The slow path: waits until the lock is free and takes it.
  void wait_and_lock() noexcept;

  std::atomic<bool> locked_{false};
};

}  // namespace meshcomm::detail
