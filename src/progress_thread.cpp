#include "progress_thread.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "meshcomm/error.hpp"
#include "progress_hooks.hpp"

namespace meshcomm::detail {

namespace {

/// The longest an idle progress thread sleeps on an engine's wakeup descriptor before it polls
/// anyway (for deadlines, and for engines whose failure reports need polling).
constexpr auto kLongestSleep = std::chrono::milliseconds{50};

}  // namespace

/// What the caller waits on: set by the progress thread when the inner operation ends.
class ProgressThread::Job final : public WorkState {
 public:
  Job(std::shared_ptr<WorkState> inner, std::chrono::milliseconds timeout, std::string what, ErrorContext where)
      : inner_(std::move(inner)), timeout_(timeout), what_(std::move(what)), where_(std::move(where)) {}

  void drive() {
    std::exception_ptr error;
    try {
      // Poll, sleeping between polls rather than yielding: on a busy core a yielding thread takes
      // time from the computation this thread exists to overlap with. An engine with a wakeup
      // descriptor (ucx) wakes the thread when there is something to do instead.
      const auto deadline = deadline_after(timeout_);
      auto pause = std::chrono::microseconds{0};
      while (!inner_->test()) {
        drive_progress_hooks();  // the transfers other than this one, as every wait does
        const auto now = Clock::now();
        if (now >= deadline) {
          inner_->wait_until(deadline);  // reports the inner operation's own timeout error
          break;
        }
        if (inner_->sleep_until_event(std::min(deadline, now + kLongestSleep))) continue;
        if (pause.count() > 0) std::this_thread::sleep_for(pause);
        pause = std::min(std::chrono::microseconds{200}, pause * 2 + std::chrono::microseconds{5});
      }
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      error_ = error;
    }
    changed_.notify_all();
  }

  bool test() override {
    std::lock_guard lock(mutex_);
    if (done_ && error_) std::rethrow_exception(error_);
    return done_;
  }

  void wait_until(Clock::time_point deadline) override {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_until(lock, deadline, [&] { return done_; })) {
      throw Error(ErrorCode::timeout,
                  fmt::format("{} did not complete in time; peer {} has not joined it", what_, where_.peer), where_);
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::shared_ptr<WorkState> inner_;
  std::chrono::milliseconds timeout_;
  std::string what_;
  ErrorContext where_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  std::exception_ptr error_;
};

ProgressThread::ProgressThread() : thread_([this] { run(); }) {}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<WorkState> ProgressThread::drive(std::shared_ptr<WorkState> inner, std::chrono::milliseconds timeout,
                                                 std::string what, ErrorContext where) {
  auto job = std::make_shared<Job>(std::move(inner), timeout, std::move(what), std::move(where));
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(job);
  }
  wake_.notify_all();
  return job;
}

void ProgressThread::run() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job->drive();
  }
}

}  // namespace meshcomm::detail
