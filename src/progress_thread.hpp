#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "meshcomm/error.hpp"
#include "work_state.hpp"

namespace meshcomm::detail {

/// A thread that drives operations to completion in the background, so that transfers progress
/// while the caller computes (MPI progresses only inside its calls). One job at a time, in order.
class ProgressThread {
 public:
  ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;
  /// Finishes the jobs handed over, then joins; never throws.
  ~ProgressThread();

  /// Hands `inner` over; the returned state completes when the thread has driven `inner` to
  /// completion (or failure, or `timeout`). A wait on it that times out names `what` and `where`
  /// (the operation, its sequence number and the peer not heard from).
  std::shared_ptr<WorkState> drive(std::shared_ptr<WorkState> inner, std::chrono::milliseconds timeout,
                                   std::string what, ErrorContext where);

 private:
  class Job;
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace meshcomm::detail
