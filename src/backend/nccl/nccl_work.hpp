#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>

#include "../backend.hpp"

namespace meshcomm::detail {

class NcclChannel;

/// An operation queued on an NCCL communicator: complete when its stream has run it (an event
/// recorded behind it). Waiting past the deadline aborts the communicator and names the
/// operation; `keep_alive` holds memory the operation reads until it is destroyed.
class NcclWork final : public WorkState {
 public:
  NcclWork(std::shared_ptr<NcclChannel> channel, ErrorContext context, std::string what);
  ~NcclWork() override;

  bool test() override;
  void wait_until(Clock::time_point deadline) override;

  /// Called by the channel once the operation is on its stream, with the event behind it.
  void enqueued(cudaEvent_t event) noexcept;
  /// Called by the channel if the operation could not be enqueued.
  void failed(std::exception_ptr error) noexcept;

 private:
  std::shared_ptr<NcclChannel> channel_;
  ErrorContext context_;
  std::string what_;
  std::mutex mutex_;
  cudaEvent_t event_ = nullptr;
  bool done_ = false;
  std::exception_ptr error_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace meshcomm::detail
