#include "nccl_work.hpp"

#include <fmt/format.h>

#include "device/cuda_check.hpp"
#include "nccl_channel.hpp"

namespace meshcomm::detail {

NcclWork::NcclWork(std::shared_ptr<NcclChannel> channel, NcclCallSite site, std::string what)
    : channel_(std::move(channel)), site_(site), what_(std::move(what)) {}

NcclWork::NcclWork(std::shared_ptr<NcclChannel> channel, NcclCallSite site, cudaStream_t stream)
    : channel_(std::move(channel)), site_(site), on_stream_(true), stream_(stream) {}

NcclWork::~NcclWork() {
  if (event_ != nullptr) channel_->recycle(event_);
}

void NcclWork::enqueued(cudaEvent_t event) noexcept {
  std::lock_guard lock(mutex_);
  on_stream_ = true;
  event_ = event;
}

cudaEvent_t NcclWork::event_behind() {
  {
    std::lock_guard lock(mutex_);
    if (done_ && error_) std::rethrow_exception(error_);
    if (!on_stream_ || event_ != nullptr) return event_;
  }
  // Recorded without holding this work's lock: the channel takes its own.
  cudaEvent_t event = channel_->record_event(stream_, this);
  {
    std::lock_guard lock(mutex_);
    if (event_ == nullptr) {
      event_ = event;
      event = nullptr;
    }
  }
  if (event != nullptr) channel_->recycle(event);  // another thread recorded one first
  std::lock_guard lock(mutex_);
  return event_;
}

void NcclWork::failed(std::exception_ptr error) noexcept {
  std::lock_guard lock(mutex_);
  done_ = true;
  error_ = std::move(error);
}

bool NcclWork::test() {
  bool waiting_for_flush = false;
  {
    std::lock_guard lock(mutex_);
    if (done_) {
      if (error_) std::rethrow_exception(error_);
      return true;
    }
    waiting_for_flush = !on_stream_;
  }
  // Queued sends and receives go to NCCL (as one group) when one of them is first looked at.
  if (waiting_for_flush) channel_->flush();
  const cudaEvent_t event = event_behind();
  const cudaError_t status = cudaEventQuery(event);
  if (status == cudaErrorNotReady) {
    channel_->check_async(site_);
    return false;
  }
  if (status != cudaSuccess) {
    // A failed kernel leaves CUDA unusable: nothing more can run on this communicator.
    try {
      device::check_cuda(status, "cudaEventQuery");
    } catch (const Error& error) {
      channel_->abort_with(error);
    }
  }
  // An aborted communicator's kernels also end: make sure this one really finished.
  channel_->check_async(site_);
  std::lock_guard lock(mutex_);
  done_ = true;
  return true;
}

void NcclWork::wait_until(Clock::time_point deadline) {
  const auto waiting_since = Clock::now();
  for (unsigned spins = 0; !test(); ++spins) {
    if (Clock::now() >= deadline) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - waiting_since).count();
      const auto later = later_calls_.load(std::memory_order_relaxed);
      channel_->abort_with(Error(ErrorCode::timeout,
                                 fmt::format("NCCL {}{} did not complete within {} ms{}",
                                             what_.empty() ? std::string(site_.label.name) : what_,
                                             later == 0 ? std::string()
                                                        : fmt::format(" (and the {} collectives queued after it on "
                                                                      "its stream)",
                                                                      later),
                                             waited,
                                             site_.peer >= 0 ? fmt::format(" (peer {} may have failed or not "
                                                                           "posted the matching call)",
                                                                           site_.peer)
                                                             : std::string()),
                                 site_.context()));
    }
    backoff(spins);
  }
}

}  // namespace meshcomm::detail
