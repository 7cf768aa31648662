#pragma once

// Single-copy reads whose descriptor has come but whose bytes are not read yet
// (ucx_single_copy_protocol.hpp). UCX reports the descriptor from whichever progress call sees it
// first, often several at once: a ring step's receive progresses the worker and takes in the
// descriptors of all its chunks. Reading every buffer there would copy megabytes before the first
// chunk is reduced, by which time its bytes have left the cache. So the read is left to the
// receive's own test, where the data is used next, and any wait of the process does the reads
// still left (through the worker's progress hook), so that a sender never waits on a receiver
// whose thread waits on something else.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace meshcomm::detail {

/// A read to do: reads the sender's buffer and answers it, unless that is done already.
class PendingRead {
 public:
  virtual ~PendingRead() = default;
  /// Does the read if it is still pending. Safe from any thread and more than once; never throws
  /// (a failed read fails its receive).
  virtual void perform() noexcept = 0;
};

/// The process's pending reads, held by its UcxWorker.
class PendingReads {
 public:
  /// Keeps `read` (and what it refers to) until it is performed or removed.
  void add(std::shared_ptr<PendingRead> read);
  /// Forgets `read`: its receive did it.
  void remove(const PendingRead* read) noexcept;
  /// Performs every read pending now.
  void perform_all() noexcept;
  /// Whether none is pending: a thread may then sleep until the worker has an event.
  [[nodiscard]] bool empty() const noexcept { return pending_.load(std::memory_order_acquire) == 0; }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<PendingRead>> reads_;
  std::atomic<std::size_t> pending_{0};
};

}  // namespace meshcomm::detail
