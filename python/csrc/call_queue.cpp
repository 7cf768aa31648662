#include "call_queue.hpp"

#include <sys/prctl.h>

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "meshcomm/error.hpp"

namespace meshcomm::torch_plugin {

std::chrono::microseconds PollBackoff::after(bool progressed) {
  const auto events = progress_events_on_this_thread();
  progressed = progressed || events != engine_events_;
  engine_events_ = events;
  idle_polls_ = progressed ? 0 : idle_polls_ + 1;
  if (idle_polls_ < 64) return std::chrono::microseconds{0};
  if (idle_polls_ < 512) {
    std::this_thread::yield();
    return std::chrono::microseconds{0};
  }
  return std::chrono::microseconds{std::min(20U, 1U << std::min(idle_polls_ - 512, 5U))};
}

FineTimerSlack::~FineTimerSlack() {
  if (saved_ >= 0) (void)prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(saved_));
}

void FineTimerSlack::use() {
  if (saved_ >= 0) return;
  const int slack = prctl(PR_GET_TIMERSLACK);
  if (slack < 0) return;
  saved_ = slack;
  (void)prctl(PR_SET_TIMERSLACK, 1000UL);
}

CallQueue::CallQueue(std::unique_ptr<Communicator> comm, std::chrono::milliseconds timeout)
    : comm_(std::move(comm)), timeout_(timeout) {}

void CallQueue::submit(c10::intrusive_ptr<TorchWork> work, Start start, Finish finish) {
  {
    std::lock_guard lock(mutex_);
    calls_.push_back({.work = std::move(work), .start = std::move(start), .finish = std::move(finish)});
    calls_queued_.store(calls_.size());
  }
  (void)drive();
  if (parked_.load()) wake();  // otherwise the worker looks in within its nap
}

bool CallQueue::poll(Call& call, std::exception_ptr& error) {
  try {
    bool done = call.operation.test();
    if (!done && std::chrono::steady_clock::now() >= call.deadline) {
      // Past the communicator's timeout: meshcomm's own wait names the operation and the peer.
      call.operation.wait(std::chrono::milliseconds{1});
      done = true;
    }
    if (!done) return false;
    if (call.finish) call.finish();
  } catch (...) {
    error = std::current_exception();
  }
  return true;
}

bool CallQueue::drive() {
  std::vector<std::pair<c10::intrusive_ptr<TorchWork>, std::exception_ptr>> ended;
  bool started = false;
  {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;  // another thread drives: it moves these calls too
    for (auto call = calls_.begin(); call != calls_.end();) {
      std::exception_ptr error;
      bool over = false;
      if (!call->started) {
        try {
          call->operation = call->start(*comm_);
          call->started = true;
          call->deadline = std::chrono::steady_clock::now() + timeout_;
          started = true;
        } catch (...) {
          error = std::current_exception();
          over = true;
        }
      }
      if (call->started) over = poll(*call, error);
      if (over) {
        ended.emplace_back(std::move(call->work), error);
        call = calls_.erase(call);
        calls_queued_.store(calls_.size());
      } else {
        ++call;
      }
    }
  }
  for (auto& [work, error] : ended) work->complete(error);
  return started || !ended.empty();
}

void CallQueue::sleep(std::chrono::microseconds nap, const std::function<bool()>& ready) {
  std::unique_lock lock(doorbell_);
  if (nap.count() == 0) {
    rung_.wait(lock, ready);
  } else {
    rung_.wait_for(lock, nap, ready);
  }
}

void CallQueue::run_exclusively(const std::function<void(Communicator&)>& body) {
  std::lock_guard lock(mutex_);
  if (!calls_.empty()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} call(s) of the group are still under way; wait for them first", calls_.size()),
                {.backend = "meshcomm (torch)", .operation = "run_exclusively"});
  }
  body(*comm_);
}

void CallQueue::wake() {
  // Through the doorbell's lock: a thread that found its condition false under it is waiting by
  // now (the conditions read atomics that are set before this is called).
  { const std::lock_guard lock(doorbell_); }
  rung_.notify_all();
}

}  // namespace meshcomm::torch_plugin
