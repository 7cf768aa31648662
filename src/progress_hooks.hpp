#pragma once

// MPI's progress rule, for every backend: a rank blocked in any wait also moves the transfers it
// posted before, whatever that wait is for. Engines that move data only while someone calls into
// them (UCX's worker, Open MPI's progress engine) register a hook; every poll_until drives all
// hooks now and then, so a rank waiting on shared-memory slots (the eager path, the shm single
// copy) still answers a peer's rendezvous or single-copy acknowledgement, and that peer, which
// may wait on this rank's answer before it reaches the same collective, is not left waiting.

#include <functional>

namespace meshcomm::detail {

/// A way to drive one engine once, registered for as long as it lives. The engine must outlive
/// it, and `drive` must be safe to call from any thread and must not throw (an engine's failure
/// shows in the operations it drives, when they are tested).
class ProgressHook {
 public:
  explicit ProgressHook(std::function<void()> drive);
  ~ProgressHook();
  ProgressHook(const ProgressHook&) = delete;
  ProgressHook& operator=(const ProgressHook&) = delete;

  /// Drives the engine once.
  void drive() const noexcept { drive_(); }

 private:
  std::function<void()> drive_;
};

/// Drives every registered hook once, unless this thread is already inside one (an engine's
/// callback that waits). Costs one atomic load when none is registered.
void drive_progress_hooks() noexcept;

}  // namespace meshcomm::detail
