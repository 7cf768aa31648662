#include "answer_queue.hpp"

#include <algorithm>
#include <limits>

namespace meshcomm::detail {

void AnswerQueue::add(std::shared_ptr<QueuedAnswer> answer) {
  std::lock_guard lock(queue_mutex_);
  queue_.push_back(std::move(answer));
  queued_.store(queue_.size(), std::memory_order_release);
}

std::deque<std::shared_ptr<QueuedAnswer>> AnswerQueue::take_through(const QueuedAnswer* last, std::size_t most) {
  std::lock_guard lock(queue_mutex_);
  auto end = queue_.begin() + static_cast<std::ptrdiff_t>(std::min(most, queue_.size()));
  if (last != nullptr) {
    end = std::find_if(queue_.begin(), queue_.end(), [&](const auto& queued) { return queued.get() == last; });
    if (end == queue_.end()) return {};
    ++end;
  }
  std::deque<std::shared_ptr<QueuedAnswer>> taken(std::make_move_iterator(queue_.begin()),
                                                  std::make_move_iterator(end));
  queue_.erase(queue_.begin(), end);
  queued_.store(queue_.size(), std::memory_order_release);
  return taken;
}

void AnswerQueue::deliver_through(const QueuedAnswer* answer) noexcept {
  // Taken and delivered under one lock: answers taken by two threads must not leave interleaved,
  // and an answer another thread took is delivered by the time this lock is had.
  std::lock_guard delivering(delivering_);
  // Outside the queue's lock: delivering takes the lock of the answer's receive, whose callback
  // may be queueing another answer at the same time.
  for (const auto& taken : take_through(answer)) taken->deliver();
}

void AnswerQueue::deliver_all() noexcept { deliver_unless_busy(std::numeric_limits<std::size_t>::max()); }

void AnswerQueue::deliver_oldest() noexcept { deliver_unless_busy(1); }

void AnswerQueue::deliver_unless_busy(std::size_t most) noexcept {
  if (empty()) return;
  std::unique_lock delivering(delivering_, std::try_to_lock);
  if (!delivering.owns_lock()) return;
  for (const auto& taken : take_through(nullptr, most)) taken->deliver();
}

}  // namespace meshcomm::detail
