#pragma once

// The calls of one process group, in call order, and the communicator they run on. Any thread
// may drive the queue: start the calls not yet started, in order, and poll the started ones. The
// caller does so as it makes a call (so a call starts at once, with no hand-off to another
// thread) and while it waits on one (so it sees the end itself); the group's worker does so for
// calls nobody waits on. One thread drives at a time (meshcomm's communicators are driven by one
// thread at a time); the Works, their futures and their callbacks complete after it lets go.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "meshcomm/communicator.hpp"
#include "torch_work.hpp"

namespace meshcomm::torch_plugin {

/// How a thread that polls for an end gives the cores away while nothing moves: it polls again
/// at once 64 times, then yields the core until 512, then naps 1, 2, 4 ... 20 µs. A poll in
/// which meshcomm's engine moved part of a transfer (progress_events_on_this_thread) counts as
/// progress, so that a large message keeps moving between its pieces instead of in naps.
class PollBackoff {
 public:
  /// After a poll on this thread that `progressed` (a call started or ended) or not: how long to
  /// nap before the next (zero: poll again now; it yields where due).
  std::chrono::microseconds after(bool progressed);

 private:
  unsigned idle_polls_ = 0;
  std::uint64_t engine_events_ = 0;
};

/// While it lives (from its first use), naps of this thread last what they say: Linux's default
/// timer slack of 50 µs would stretch the 1–20 µs naps of PollBackoff. The thread's own slack
/// comes back when it ends.
class FineTimerSlack {
 public:
  FineTimerSlack() = default;
  ~FineTimerSlack();
  FineTimerSlack(const FineTimerSlack&) = delete;
  FineTimerSlack& operator=(const FineTimerSlack&) = delete;
  /// Sets the fine slack, once.
  void use();

 private:
  long saved_ = -1;  // the thread's slack before, in ns; -1: not changed
};

/// One process group's calls in call order and the communicator they run on; any thread may
/// drive it, one at a time (see the top of this file).
class CallQueue {
 public:
  /// Starts a meshcomm operation on the communicator.
  using Start = std::function<Work(Communicator&)>;
  /// Runs once the operation completed (copies results out).
  using Finish = std::function<void()>;

  CallQueue(std::unique_ptr<Communicator> comm, std::chrono::milliseconds timeout);

  [[nodiscard]] Communicator& communicator() noexcept { return *comm_; }

  /// Queues a call behind every earlier one and drives the queue once, so that it starts now
  /// unless another thread is driving (which then starts it); wakes a parked worker.
  void submit(c10::intrusive_ptr<TorchWork> work, Start start, Finish finish);
  /// Starts what is queued and polls what is started, once, unless another thread is at it;
  /// completes the calls that ended. True when anything started or ended.
  bool drive();
  /// True while calls are queued or under way; never waits for the thread that drives.
  [[nodiscard]] bool busy() const noexcept { return calls_queued_.load() > 0; }
  /// Waits until `ready` holds or `nap` passed (zero: no bound); woken by wake(), which a
  /// submit() to a parked worker rings. The sleeper never takes the lock that drive() holds
  /// while it polls, so a caller polling its call pays nothing for a sleeping worker.
  void sleep(std::chrono::microseconds nap, const std::function<bool()>& ready);
  /// Wakes a thread in sleep().
  void wake();
  /// Runs `body` on the communicator while no call is queued or under way; calls submitted
  /// meanwhile wait until it returns. Throws if calls are under way.
  void run_exclusively(const std::function<void(Communicator&)>& body);
  /// Marks the worker as parked (sleeping until woken: submit() wakes it) or not.
  void set_parked(bool parked) noexcept { parked_.store(parked); }

  /// Threads inside a TorchWork::wait drive the queue themselves: the worker stands back.
  [[nodiscard]] bool someone_waits() const noexcept { return waiters_.load() > 0; }
  /// Counts a waiting thread while it lives.
  class Waiter {
   public:
    explicit Waiter(CallQueue& queue) : queue_(queue) { queue_.waiters_.fetch_add(1); }
    ~Waiter() { queue_.waiters_.fetch_sub(1); }
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;

   private:
    CallQueue& queue_;
  };

 private:
  struct Call {
    c10::intrusive_ptr<TorchWork> work;
    Start start;
    Finish finish;
    Work operation;
    bool started = false;
    std::chrono::steady_clock::time_point deadline;
  };
  /// Tests a started call; true once it is over (completed or failed, `error` set then).
  bool poll(Call& call, std::exception_ptr& error);

  std::unique_ptr<Communicator> comm_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;  // the calls and the communicator
  std::deque<Call> calls_;
  std::atomic<std::size_t> calls_queued_{0};  // calls_.size(), readable without mutex_
  std::mutex doorbell_;                       // only for sleep() and wake()
  std::condition_variable rung_;
  std::atomic<int> waiters_{0};
  std::atomic<bool> parked_{false};
};

}  // namespace meshcomm::torch_plugin
