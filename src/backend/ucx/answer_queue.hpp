#pragma once

// The answers a process owes its single-copy senders (ucx_single_copy_protocol.hpp), in the order
// their descriptors came. A sender waits for its answers on one tag per message tag, and UCX
// matches them in the order they leave, so a later message's answer must never overtake an
// earlier one's: a sender that took "send the payload" meant for its next message would send the
// wrong buffer.
//
// UCX reports descriptors from whichever progress call sees them first, often several at once (a
// ring step's receive takes in the descriptors of all its chunks). Reading every buffer there
// would copy megabytes before the first chunk is reduced, by which time its bytes have left the
// cache. So the callback only queues what it owes (a read and its answer, or an answer alone),
// and a receive's own test delivers the queue up to and including its own answer, next to the use
// of the data; any wait of the process delivers the rest (through the worker's progress hook), so
// a sender never waits on a receiver whose thread waits on something else.

#include <atomic>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>

namespace meshcomm::detail {

/// What a receive owes its sender: a read of the sender's buffer and its answer, or an answer.
class QueuedAnswer {
 public:
  virtual ~QueuedAnswer() = default;
  /// Does what is owed. Called once per queueing, by whichever thread delivers it; never throws
  /// (a failed read fails its receive).
  virtual void deliver() noexcept = 0;
};

/// The process's owed answers, held by its UcxWorker, delivered strictly in the order queued.
class AnswerQueue {
 public:
  /// Queues `answer` (and keeps what it refers to alive) behind every answer queued before it.
  void add(std::shared_ptr<QueuedAnswer> answer);
  /// Delivers, in order, every answer queued before `answer` and `answer` itself. Returns once
  /// `answer` is delivered, by this thread or by another; at once if it is not queued.
  void deliver_through(const QueuedAnswer* answer) noexcept;
  /// Delivers every answer queued now, unless another thread is delivering (that one goes on).
  void deliver_all() noexcept;
  /// Delivers the oldest answer queued now, as deliver_all: for a send that waits for its
  /// receiver's answer while that receiver may wait for this process's read in turn.
  void deliver_oldest() noexcept;
  /// Whether none is queued: a thread may then sleep until the worker has an event.
  [[nodiscard]] bool empty() const noexcept { return queued_.load(std::memory_order_acquire) == 0; }

 private:
  /// Takes the answers in front of the queue, through `last` (where null: up to `most` of them);
  /// empty if `last` is not queued.
  std::deque<std::shared_ptr<QueuedAnswer>> take_through(
      const QueuedAnswer* last, std::size_t most = std::numeric_limits<std::size_t>::max());
  /// Delivers up to `most` answers from the front, unless another thread is delivering.
  void deliver_unless_busy(std::size_t most) noexcept;

  std::mutex delivering_;  ///< held while answers are delivered, so that they leave in order
  std::mutex queue_mutex_;
  std::deque<std::shared_ptr<QueuedAnswer>> queue_;
  std::atomic<std::size_t> queued_{0};
};

}  // namespace meshcomm::detail
