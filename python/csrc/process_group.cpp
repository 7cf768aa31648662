#include "process_group.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>

#include <numeric>

#include "meshcomm/error.hpp"
#include "tensor_buffers.hpp"

namespace meshcomm::torch_plugin {

namespace {

/// Element counts of the blocks of an uneven all-to-all: `splits` rows of `row` elements each.
std::vector<std::size_t> element_counts(const std::vector<int64_t>& splits, std::size_t row) {
  std::vector<std::size_t> counts;
  for (auto split : splits) counts.push_back(static_cast<std::size_t>(split) * row);
  return counts;
}

std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> offsets(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), std::size_t{0});
  return offsets;
}

}  // namespace

ProcessGroupMeshcomm::ProcessGroupMeshcomm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                           std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size),
      bootstrap_(std::make_unique<StoreBootstrap>(store, rank, size, timeout)) {
  queue_ = std::make_shared<CallQueue>(
      std::make_unique<Communicator>(Communicator::create(*bootstrap_, {.timeout = timeout})), timeout);
  worker_ = std::thread([this] { serve(); });
}

ProcessGroupMeshcomm::~ProcessGroupMeshcomm() {
  stopping_ = true;
  queue_->wake();
  worker_.join();
}

void ProcessGroupMeshcomm::serve() {
  // Sleeps of a few microseconds mean what they say (Linux's default slack is 50 µs).
  (void)prctl(PR_SET_TIMERSLACK, 1000UL);
  // Neither the worker nor a waiting caller wakes the other: a call is started by its caller, a
  // waiting caller drives the queue itself, and the worker looks in now and then for calls that
  // nobody waits on. Only once idle for a while does the worker park until the next call.
  constexpr auto kLookIn = std::chrono::microseconds{200};
  constexpr auto kWhileWaitedOn = std::chrono::microseconds{1000};
  constexpr int kIdleLooksBeforeParking = 50;
  const auto stop = [this] { return stopping_.load(); };
  PollBackoff backoff;
  int idle_looks = 0;
  while (true) {
    if (queue_->someone_waits()) {  // a waiting thread drives the queue itself
      queue_->sleep(kWhileWaitedOn, stop);
      continue;
    }
    const bool progressed = queue_->drive();
    if (queue_->busy()) {
      idle_looks = 0;
      const auto nap = backoff.after(progressed);
      if (nap.count() > 0) queue_->sleep(nap, stop);
      continue;
    }
    if (stop()) return;
    if (++idle_looks < kIdleLooksBeforeParking) {
      queue_->sleep(kLookIn, stop);
      continue;
    }
    queue_->set_parked(true);
    queue_->sleep(std::chrono::microseconds{0}, [this] { return stopping_.load() || queue_->busy(); });
    queue_->set_parked(false);
    idle_looks = 0;
  }
}

c10::intrusive_ptr<TorchWork> ProcessGroupMeshcomm::enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                                            Start start, Finish finish) {
  auto work = c10::make_intrusive<TorchWork>(getRank(), type, std::move(outputs), queue_);
  queue_->submit(work, std::move(start), std::move(finish));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::broadcast(std::vector<at::Tensor>& tensors,
                                                               const c10d::BroadcastOptions& opts) {
  const auto& tensor = only_tensor(tensors, "broadcast", "tensors");
  const auto data = buffer_of(tensor, "broadcast", "tensors[0]");
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, {tensor},
                 [data, root, keep = tensor](Communicator& comm) { return comm.broadcast(data, {.root = root}); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::allreduce(std::vector<at::Tensor>& tensors,
                                                               const c10d::AllreduceOptions& opts) {
  const auto& tensor = only_tensor(tensors, "allreduce", "tensors");
  const auto data = buffer_of(tensor, "allreduce", "tensors[0]");
  const auto op = reduce_op_of(opts.reduceOp, "allreduce");
  return enqueue(c10d::OpType::ALLREDUCE, {tensor},
                 [data, op, keep = tensor](Communicator& comm) { return comm.all_reduce(data, data, {.op = op}); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::AllgatherOptions& /*opts*/) {
  const auto in = buffer_of(input, "_allgather_base", "input");
  const auto out = buffer_of(output, "_allgather_base", "output");
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output},
                 [in, out, keep = std::vector{input, output}](Communicator& comm) { return comm.all_gather(in, out); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                               std::vector<at::Tensor>& inputs,
                                                               const c10d::AllgatherOptions& /*opts*/) {
  const auto& input = only_tensor(inputs, "allgather", "input_tensors");
  if (outputs.size() != 1 || outputs[0].size() != static_cast<std::size_t>(getSize())) {
    throw invalid_call("allgather", fmt::format("output_tensors must be one list of {} tensors (one per rank)", getSize()));
  }
  const auto in = buffer_of(input, "allgather", "input");
  for (const auto& output : outputs[0]) (void)buffer_of(output, "allgather", "output_tensors[0][r]");
  auto gathered = at::empty({getSize(), input.numel()}, input.options());
  const auto out = buffer_of(gathered, "allgather", "output");
  auto targets = outputs[0];
  return enqueue(c10d::OpType::ALLGATHER, targets,
                 [in, out, input](Communicator& comm) { return comm.all_gather(in, out); },
                 [gathered, targets]() mutable {
                   for (std::size_t rank = 0; rank < targets.size(); ++rank) {
                     targets[rank].view(-1).copy_(gathered[static_cast<int64_t>(rank)]);
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                          const c10d::ReduceScatterOptions& opts) {
  const auto in = buffer_of(input, "_reduce_scatter_base", "input");
  const auto out = buffer_of(output, "_reduce_scatter_base", "output");
  const auto op = reduce_op_of(opts.reduceOp, "_reduce_scatter_base");
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {output},
                 [in, out, op, keep = std::vector{input, output}](Communicator& comm) {
                   return comm.reduce_scatter(in, out, {.op = op});
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                                    const c10d::ReduceScatterOptions& opts) {
  const auto& output = only_tensor(outputs, "reduce_scatter", "output_tensors");
  if (inputs.size() != 1 || inputs[0].size() != static_cast<std::size_t>(getSize())) {
    throw invalid_call("reduce_scatter", fmt::format("input_tensors must be one list of {} tensors (one per rank)", getSize()));
  }
  auto flat = at::cat(inputs[0]).contiguous();
  const auto in = buffer_of(flat, "reduce_scatter", "input_tensors[0]");
  const auto out = buffer_of(output, "reduce_scatter", "output");
  const auto op = reduce_op_of(opts.reduceOp, "reduce_scatter");
  return enqueue(c10d::OpType::REDUCE_SCATTER, {output}, [in, out, op, keep = std::vector{flat, output}](Communicator& comm) {
    return comm.reduce_scatter(in, out, {.op = op});
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                   std::vector<int64_t>& output_splits,
                                                                   std::vector<int64_t>& input_splits,
                                                                   const c10d::AllToAllOptions& /*opts*/) {
  const auto in = buffer_of(input, "alltoall_base", "input");
  const auto out = buffer_of(output, "alltoall_base", "output");
  const auto keep = std::vector{input, output};
  if (output_splits.empty() && input_splits.empty()) {
    return enqueue(c10d::OpType::ALLTOALL_BASE, {output},
                   [in, out, keep](Communicator& comm) { return comm.all_to_all(in, out); });
  }
  const auto ranks = static_cast<std::size_t>(getSize());
  if (output_splits.size() != ranks || input_splits.size() != ranks) {
    throw invalid_call("alltoall_base", fmt::format("output_split_sizes and input_split_sizes hold {} and {} entries; give "
                                               "{} each (or none, for equal blocks)",
                                               output_splits.size(), input_splits.size(), ranks));
  }
  const auto row = [](const at::Tensor& tensor) {
    return tensor.dim() == 0 || tensor.size(0) == 0 ? std::size_t{1}
                                                    : static_cast<std::size_t>(tensor.numel() / tensor.size(0));
  };
  auto send_counts = element_counts(input_splits, row(input));
  auto recv_counts = element_counts(output_splits, row(output));
  auto send_offsets = offsets_of(send_counts);
  auto recv_offsets = offsets_of(recv_counts);
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output},
                 [in, out, keep, send_counts, recv_counts, send_offsets, recv_offsets](Communicator& comm) {
                   return comm.all_to_allv(in, out,
                                           {.send_counts = send_counts, .send_offsets = send_offsets,
                                            .recv_counts = recv_counts, .recv_offsets = recv_offsets});
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::send(std::vector<at::Tensor>& tensors, int destination, int tag) {
  const auto& tensor = only_tensor(tensors, "send", "tensors");
  const auto data = buffer_of(tensor, "send", "tensor");
  return enqueue(c10d::OpType::SEND, {tensor}, [data, destination, tag, keep = tensor](Communicator& comm) {
    return comm.isend(data, destination, tag);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::recv(std::vector<at::Tensor>& tensors, int source, int tag) {
  const auto& tensor = only_tensor(tensors, "recv", "tensors");
  const auto data = buffer_of(tensor, "recv", "tensor");
  return enqueue(c10d::OpType::RECV, {tensor}, [data, source, tag, keep = tensor](Communicator& comm) {
    return comm.irecv(data, source, tag);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::barrier(const c10d::BarrierOptions& /*opts*/) {
  return enqueue(c10d::OpType::BARRIER, {}, [](Communicator& comm) { return comm.ibarrier(); });
}

}  // namespace meshcomm::torch_plugin
