#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../backend.hpp"

namespace meshcomm::detail {

class InprocGroup;

/// One posted send or receive of the inproc backend, and its completion.
class InprocOperation final : public WorkState, public std::enable_shared_from_this<InprocOperation> {
 public:
  struct Description {
    bool is_send;
    int owner;  // rank that posted it
    int peer;   // rank it exchanges with
    int tag;
    Lane lane;
    std::size_t bytes;
    MemoryKind memory;
    ErrorContext context;
  };

  InprocOperation(std::weak_ptr<InprocGroup> group, Description description, void* buffer)
      : group_(std::move(group)), description_(std::move(description)), buffer_(buffer) {}

  bool test() override;
  void wait_until(Clock::time_point deadline) override;

  /// Marks the operation complete, with `error` if it failed.
  void complete(std::exception_ptr error = nullptr);

  [[nodiscard]] const Description& description() const noexcept { return description_; }
  [[nodiscard]] void* buffer() const noexcept { return buffer_; }

 private:
  [[nodiscard]] Error timeout_error(Clock::time_point deadline) const;

  std::weak_ptr<InprocGroup> group_;
  Description description_;
  void* buffer_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::exception_ptr error_;
  Clock::time_point started_ = coarse_now();  // read only by timeouts' messages
};

/// The rendezvous of one inproc communicator: posted sends and receives wait in per-destination
/// queues until their counterpart arrives; whichever side comes second copies the bytes once,
/// straight from the sender's buffer into the receiver's.
class InprocGroup : public std::enable_shared_from_this<InprocGroup> {
 public:
  explicit InprocGroup(int size) : unmatched_sends_(size), unmatched_receives_(size) {}

  /// Posts `operation`; matches and copies immediately if its counterpart is waiting.
  void post(const std::shared_ptr<InprocOperation>& operation);

  /// Removes `operation` if it is still unmatched; false if it was already matched.
  bool withdraw(const InprocOperation* operation);

  /// The size and tag of an unmatched internal send from `receive`'s peer to its owner for the
  /// same collective number under another shape (CollectiveTags::same_call_other_shape), if
  /// there is one: the ranks disagree about that call.
  std::optional<std::pair<std::size_t, int>> send_of_another_shape(const InprocOperation& receive);

  /// Removes every unmatched operation that rank `owner` posted on this group, and returns them.
  std::vector<std::shared_ptr<InprocOperation>> withdraw_all_of(int owner);

  /// The group of one split's `color`, created by the first member to ask, shared by all
  /// `member_count` members, and forgotten once each has taken it.
  std::shared_ptr<InprocGroup> child(std::uint64_t split_index, int color, int member_count);

 private:
  static void transfer(InprocOperation& send, InprocOperation& receive);

  std::mutex mutex_;
  // Indexed by destination rank; FIFO, so messages of one pair and tag never overtake.
  std::vector<std::deque<std::shared_ptr<InprocOperation>>> unmatched_sends_;
  std::vector<std::deque<std::shared_ptr<InprocOperation>>> unmatched_receives_;

  struct PendingChild {
    std::shared_ptr<InprocGroup> group;
    int taken = 0;
  };
  std::map<std::pair<std::uint64_t, int>, PendingChild> children_;
};

}  // namespace meshcomm::detail
