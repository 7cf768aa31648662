#pragma once

// The c10d::Work of one call on the meshcomm backend: completed by whichever thread drives the
// group's CallQueue when the call ends, with a future that completes at the same moment (DDP
// chains its gradient hooks on it). A thread that waits on it drives the queue itself.

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace meshcomm::torch_plugin {

class CallQueue;

class TorchWork final : public c10d::Work {
 public:
  /// A pending call of `type` on `rank` whose results are `outputs`, queued on `queue`.
  TorchWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<CallQueue> queue);

  /// Drives the queue until the call completed or `timeout` (zero: no bound beyond the call's
  /// own, which is the communicator's) passed; rethrows meshcomm's error of a failed call.
  bool wait(std::chrono::milliseconds timeout) override;
  /// Drives the queue once (like MPI_Test), then says whether the call is over; never blocks on
  /// a peer.
  bool isCompleted() override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  /// Called by the thread that drove the call to its end, once it finished (`error` null) or failed.
  void complete(std::exception_ptr error);

 private:
  c10d::OpType type_;
  std::vector<at::Tensor> outputs_;
  std::weak_ptr<CallQueue> queue_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace meshcomm::torch_plugin
