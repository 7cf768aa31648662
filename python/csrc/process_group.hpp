#pragma once

// The torch.distributed backend "meshcomm": a c10d::ProcessGroup that owns a meshcomm
// Communicator made through the group's store. Calls are checked and their buffers taken at once
// (a wrong call fails where it is made), then go through the group's CallQueue: started in call
// order by the caller itself, polled by whoever waits on one and otherwise by a worker thread, so
// a receive never holds back a later send, and each call's Work and future complete as soon as
// its operation does (or fails, at the communicator's timeout, with meshcomm's message).

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <memory>
#include <thread>

#include "call_queue.hpp"
#include "meshcomm/communicator.hpp"
#include "store_bootstrap.hpp"
#include "torch_work.hpp"

namespace meshcomm::torch_plugin {

class ProcessGroupMeshcomm final : public c10d::ProcessGroup {
 public:
  /// Collective over the group: creates its communicator (ucx backend) through `store`; every
  /// wait of its calls is bounded by `timeout`.
  ProcessGroupMeshcomm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout);
  ~ProcessGroupMeshcomm() override;

  const std::string getBackendName() const override { return "meshcomm"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits, std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int destination, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int source, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // Composed from meshcomm's collectives (process_group_composed.cpp).
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;

  /// The communicator, for meshcomm's own ops keyed by this group (halo exchange).
  [[nodiscard]] Communicator& communicator() noexcept { return queue_->communicator(); }

  /// Runs `body` on the communicator while none of the group's calls is under way (see
  /// CallQueue::run_exclusively): for timing meshcomm's own calls beside torch's.
  void run_exclusively(const std::function<void(Communicator&)>& body) { queue_->run_exclusively(body); }

  using Start = CallQueue::Start;
  using Finish = CallQueue::Finish;

  /// Queues `start` behind every earlier call (and starts it, unless another thread is driving
  /// the queue); the Work completes once its operation has, and `finish` ran.
  c10::intrusive_ptr<TorchWork> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs, Start start,
                                        Finish finish = {});

 private:
  /// The worker: drives the queue while calls are under way and nobody waits on one.
  void serve();

  std::unique_ptr<StoreBootstrap> bootstrap_;
  std::shared_ptr<CallQueue> queue_;
  std::atomic<bool> stopping_{false};
  std::thread worker_;
};

}  // namespace meshcomm::torch_plugin
