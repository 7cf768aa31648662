#include "inproc_group.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "call_record.hpp"
#include "device/device_runtime.hpp"
#include "patterns/collective_tags.hpp"
#include "plain_copy.hpp"

namespace meshcomm::detail {

bool InprocOperation::test() {
  std::lock_guard lock(mutex_);
  if (done_ && error_) std::rethrow_exception(error_);
  return done_;
}

void InprocOperation::complete(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = std::move(error);
  }
  done_changed_.notify_all();
}

Error InprocOperation::timeout_error(Clock::time_point deadline) const {
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started_).count();
  const auto& d = description_;
  if (d.is_send) {
    return Error(ErrorCode::timeout,
                 fmt::format("send of {} bytes to peer {} (tag {}) was not received within {} ms: peer {} posted no "
                             "matching receive",
                             d.bytes, d.peer, d.tag, waited, d.peer),
                 d.context);
  }
  return Error(ErrorCode::timeout,
               fmt::format("receive of {} bytes from peer {} (tag {}) got no message within {} ms: peer {} sent "
                           "nothing with that tag",
                           d.bytes, d.peer, d.tag, waited, d.peer),
               d.context);
}

void InprocOperation::wait_until(Clock::time_point deadline) {
  {
    std::unique_lock lock(mutex_);
    if (done_changed_.wait_until(lock, deadline, [&] { return done_; })) {
      if (error_) std::rethrow_exception(error_);
      return;
    }
  }
  auto group = group_.lock();
  if (group != nullptr && group->withdraw(this)) {
    // A peer that sent this collective's message under another shape disagrees about the call.
    const auto other = group->send_of_another_shape(*this);
    const auto& d = description_;
    complete(std::make_exception_ptr(other ? disagreeing_call_error(d.context, d.bytes, d.tag, other->first, other->second)
                                           : timeout_error(deadline)));
  } else {
    // Matched at the last moment: the copy is under way and finishes without waiting on anyone.
    std::unique_lock lock(mutex_);
    done_changed_.wait(lock, [&] { return done_; });
  }
  test();
}

void InprocGroup::transfer(InprocOperation& send, InprocOperation& receive) {
  const auto& s = send.description();
  const auto& r = receive.description();
  if (s.bytes != r.bytes) {
    auto message = fmt::format("message size mismatch on tag {}: rank {} sent {} bytes but rank {} posted a receive "
                               "of {} bytes; both sides must agree",
                               s.tag, s.owner, s.bytes, r.owner, r.bytes);
    auto send_context = s.context;
    auto receive_context = r.context;
    send_context.operation = receive_context.operation = "isend/irecv";
    send.complete(std::make_exception_ptr(Error(ErrorCode::size_mismatch, message, send_context)));
    receive.complete(std::make_exception_ptr(Error(ErrorCode::size_mismatch, message, receive_context)));
    return;
  }
  std::exception_ptr failure;
  if (s.bytes > 0) {
    try {
      if (s.memory == MemoryKind::cuda || r.memory == MemoryKind::cuda) {
        // On the matching thread's own stream, so that pairs of ranks copy concurrently.
        device::copy(receive.buffer(), send.buffer(), s.bytes);
      } else {
        plain_copy(receive.buffer(), send.buffer(), s.bytes);
      }
    } catch (const Error&) {
      failure = std::current_exception();
    }
  }
  send.complete(failure);
  receive.complete(failure);
}

void InprocGroup::post(const std::shared_ptr<InprocOperation>& operation) {
  const auto& d = operation->description();
  std::shared_ptr<InprocOperation> counterpart;
  {
    std::lock_guard lock(mutex_);
    // A send waits at its destination (the peer); a receive at its owner.
    const int destination = d.is_send ? d.peer : d.owner;
    auto& candidates = d.is_send ? unmatched_receives_[destination] : unmatched_sends_[destination];
    auto match = std::find_if(candidates.begin(), candidates.end(), [&](const auto& other) {
      const auto& o = other->description();
      return o.lane == d.lane && o.tag == d.tag && o.owner == d.peer && o.peer == d.owner;
    });
    if (match == candidates.end()) {
      (d.is_send ? unmatched_sends_[destination] : unmatched_receives_[destination]).push_back(operation);
      return;
    }
    counterpart = std::move(*match);
    candidates.erase(match);
  }
  // Copy outside the lock, so that transfers between different pairs run in parallel.
  if (d.is_send) {
    transfer(*operation, *counterpart);
  } else {
    transfer(*counterpart, *operation);
  }
}

bool InprocGroup::withdraw(const InprocOperation* operation) {
  std::lock_guard lock(mutex_);
  const auto& d = operation->description();
  auto& queue = d.is_send ? unmatched_sends_[d.peer] : unmatched_receives_[d.owner];
  auto found = std::find_if(queue.begin(), queue.end(), [&](const auto& other) { return other.get() == operation; });
  if (found == queue.end()) return false;
  queue.erase(found);
  return true;
}

std::optional<std::pair<std::size_t, int>> InprocGroup::send_of_another_shape(const InprocOperation& receive) {
  const auto& r = receive.description();
  if (r.is_send || r.lane != Lane::internal || !CollectiveTags::is_collective(r.tag)) return std::nullopt;
  std::lock_guard lock(mutex_);
  for (const auto& send : unmatched_sends_[static_cast<std::size_t>(r.owner)]) {
    const auto& s = send->description();
    if (s.owner == r.peer && s.lane == Lane::internal && CollectiveTags::same_call_other_shape(r.tag, s.tag)) {
      return std::pair{s.bytes, s.tag};
    }
  }
  return std::nullopt;
}

std::vector<std::shared_ptr<InprocOperation>> InprocGroup::withdraw_all_of(int owner) {
  std::vector<std::shared_ptr<InprocOperation>> withdrawn;
  auto take_owned = [&](std::deque<std::shared_ptr<InprocOperation>>& queue) {
    std::erase_if(queue, [&](const auto& operation) {
      if (operation->description().owner != owner) return false;
      withdrawn.push_back(operation);
      return true;
    });
  };
  std::lock_guard lock(mutex_);
  for (auto& queue : unmatched_sends_) take_owned(queue);
  take_owned(unmatched_receives_[static_cast<std::size_t>(owner)]);
  return withdrawn;
}

std::shared_ptr<InprocGroup> InprocGroup::child(std::uint64_t split_index, int color, int member_count) {
  std::lock_guard lock(mutex_);
  auto& pending = children_[{split_index, color}];
  if (pending.group == nullptr) pending.group = std::make_shared<InprocGroup>(member_count);
  auto group = pending.group;
  if (++pending.taken == member_count) children_.erase({split_index, color});
  return group;
}

}  // namespace meshcomm::detail
