#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "../backend.hpp"

namespace meshcomm::detail {

class NcclChannel;

/// Where an NCCL operation was issued (its backend field "nccl").
using NcclCallSite = CallSite;

/// An operation queued on an NCCL communicator: complete when its stream has run it, as an event
/// recorded behind it shows. Sends and receives get their event when their group is enqueued. A
/// collective gets it when first tested or waited on (an event per call would cost a tenth of a
/// small collective): it then completes once its stream has run what was queued on the stream up
/// to that moment, which is exact when it is waited on before more work goes on the stream. So
/// collectives queued back to back on one stream before any of them is looked at share one work
/// (see NcclChannel::enqueue), which allocates nothing per call.
/// Waiting past the deadline aborts the communicator and names the operation.
class NcclWork final : public WorkState {
 public:
  /// A queued send or receive, waiting for its group to be enqueued.
  NcclWork(std::shared_ptr<NcclChannel> channel, NcclCallSite site, std::string what);
  /// A collective already on `stream`.
  NcclWork(std::shared_ptr<NcclChannel> channel, NcclCallSite site, cudaStream_t stream);
  ~NcclWork() override;

  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// Every failure aborts the channel, which marks the communicator fatal.
  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& /*fatal*/) override { return true; }

  /// The stream a collective is queued on.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  /// Called by the channel, under its lock, when a later collective on the same stream shares
  /// this work. Only that lock's holder writes the count, so a plain load and store do (no
  /// locked read-modify-write on every call); a timeout message reads it from another thread.
  void covers_another_call() noexcept {
    later_calls_.store(later_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  /// Called by the channel once the operation is on its stream, with the event behind it.
  void enqueued(cudaEvent_t event) noexcept;
  /// The event behind the operation, recorded now if it has none yet; null while still queued.
  cudaEvent_t event_behind();
  /// Called by the channel if the operation could not be enqueued.
  void failed(std::exception_ptr error) noexcept;

 private:
  std::shared_ptr<NcclChannel> channel_;
  NcclCallSite site_;
  std::string what_;
  std::atomic<std::uint64_t> later_calls_{0};
  std::mutex mutex_;
  bool on_stream_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t event_ = nullptr;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace meshcomm::detail
