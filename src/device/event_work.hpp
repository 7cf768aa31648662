#pragma once

// A Work that completes when a CUDA event has: what stream-ordered device transfers return.

#include <cuda_runtime_api.h>

#include <string>

#include "cuda_check.hpp"
#include "meshcomm/error.hpp"
#include "work_state.hpp"

namespace meshcomm::detail {

/// Completes when `event` has; waiting past the deadline is a timeout saying `what` had not
/// finished.
class EventWork final : public WorkState {
 public:
  EventWork(cudaEvent_t event, ErrorContext context, std::string what)
      : event_(event), context_(std::move(context)), what_(std::move(what)) {}

  bool test() override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    device::check_cuda(status, "cudaEventQuery");
    return true;
  }

  void wait_until(Clock::time_point deadline) override {
    if (!poll_until([this] { return test(); }, deadline)) {
      throw Error(ErrorCode::timeout, what_ + " did not finish in time", context_);
    }
  }

 private:
  cudaEvent_t event_;
  ErrorContext context_;
  std::string what_;
};

}  // namespace meshcomm::detail
