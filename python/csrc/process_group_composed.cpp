// The calls of the "meshcomm" backend that meshcomm has no collective of the same name for,
// composed from the ones it has: each runs one meshcomm collective on a staging tensor, then
// copies results out on the worker once it completed. Rooted calls cost as much as their
// all-to-all counterpart (reduce is an all-reduce, gather an all-gather, scatter a broadcast).

#include <fmt/format.h>

#include <numeric>

#include "meshcomm/error.hpp"
#include "process_group.hpp"
#include "tensor_buffers.hpp"

namespace meshcomm::torch_plugin {

namespace {

/// The tensors of a one-list argument, checked to hold `count` tensors (any count if negative).
const std::vector<at::Tensor>& only_list(const std::vector<std::vector<at::Tensor>>& lists, std::int64_t count,
                                         const char* call, const char* argument) {
  if (lists.size() != 1 || (count >= 0 && lists[0].size() != static_cast<std::size_t>(count))) {
    throw invalid_call(call, fmt::format("{} must be one list of {} tensors", argument, count));
  }
  return lists[0];
}

int checked_root(std::int64_t root, int size, const char* call) {
  if (root < 0 || root >= size) throw invalid_call(call, fmt::format("root = {} is not a rank in [0, {})", root, size));
  return static_cast<int>(root);
}

/// Copies the blocks of flat `source` into `targets`, one block per tensor in order.
void split_into(const at::Tensor& source, std::vector<at::Tensor>& targets) {
  std::int64_t offset = 0;
  for (auto& target : targets) {
    target.view(-1).copy_(source.narrow(0, offset, target.numel()));
    offset += target.numel();
  }
}

/// The tensors as one flat contiguous tensor.
at::Tensor flat(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  for (const auto& tensor : tensors) views.push_back(tensor.reshape(-1));
  return at::cat(views).contiguous();
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                         const c10d::AllreduceCoalescedOptions& opts) {
  for (const auto& tensor : tensors) (void)buffer_of(tensor, "allreduce_coalesced", "tensors[i]");
  auto staged = flat(tensors);
  const auto data = buffer_of(staged, "allreduce_coalesced", "tensors");
  const auto op = reduce_op_of(opts.reduceOp, "allreduce_coalesced");
  return enqueue(
      c10d::OpType::ALLREDUCE_COALESCED, tensors,
      [data, op, staged](Communicator& comm) { return comm.all_reduce(data, data, {.op = op}); },
      [staged, targets = tensors]() mutable { split_into(staged, targets); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::reduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::ReduceOptions& opts) {
  const auto& tensor = only_tensor(tensors, "reduce", "tensors");
  (void)buffer_of(tensor, "reduce", "tensors[0]");
  const int root = checked_root(opts.rootRank, getSize(), "reduce");
  auto staged = tensor.clone(at::MemoryFormat::Contiguous);
  const auto data = buffer_of(staged, "reduce", "tensors[0]");
  const auto op = reduce_op_of(opts.reduceOp, "reduce");
  const bool mine = getRank() == root;
  return enqueue(
      c10d::OpType::REDUCE, {tensor}, [data, op, staged](Communicator& comm) { return comm.all_reduce(data, data, {.op = op}); },
      [staged, target = tensor, mine]() mutable {
        if (mine) target.copy_(staged);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::GatherOptions& opts) {
  const auto& input = only_tensor(inputs, "gather", "input_tensors");
  const auto in = buffer_of(input, "gather", "input");
  const int root = checked_root(opts.rootRank, getSize(), "gather");
  std::vector<at::Tensor> targets;
  if (getRank() == root) {
    targets = only_list(outputs, getSize(), "gather", "output_tensors (on the root)");
    for (const auto& target : targets) {
      if (target.numel() != input.numel()) {
        throw invalid_call("gather", fmt::format("an output tensor holds {} elements, the input {}", target.numel(),
                                            input.numel()));
      }
    }
  } else if (!outputs.empty() && !outputs[0].empty()) {
    throw invalid_call("gather", "output_tensors must be empty on a rank that is not the root");
  }
  auto gathered = at::empty({getSize() * input.numel()}, input.options());
  const auto out = buffer_of(gathered, "gather", "output");
  return enqueue(
      c10d::OpType::GATHER, targets, [in, out, input, gathered](Communicator& comm) { return comm.all_gather(in, out); },
      [gathered, targets]() mutable { split_into(gathered, targets); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::scatter(std::vector<at::Tensor>& outputs,
                                                             std::vector<std::vector<at::Tensor>>& inputs,
                                                             const c10d::ScatterOptions& opts) {
  const auto& output = only_tensor(outputs, "scatter", "output_tensors");
  (void)buffer_of(output, "scatter", "output");
  const int root = checked_root(opts.rootRank, getSize(), "scatter");
  at::Tensor staged;
  if (getRank() == root) {
    const auto& sources = only_list(inputs, getSize(), "scatter", "input_tensors (on the root)");
    for (const auto& source : sources) {
      if (source.numel() != output.numel()) {
        throw invalid_call("scatter", fmt::format("an input tensor holds {} elements, the output {}", source.numel(),
                                             output.numel()));
      }
    }
    staged = flat(sources);
  } else {
    if (!inputs.empty() && !inputs[0].empty()) {
      throw invalid_call("scatter", "input_tensors must be empty on a rank that is not the root");
    }
    staged = at::empty({getSize() * output.numel()}, output.options());
  }
  const auto data = buffer_of(staged, "scatter", "input");
  const auto block = output.numel() * getRank();
  return enqueue(
      c10d::OpType::SCATTER, {output},
      [data, root, staged](Communicator& comm) { return comm.broadcast(data, {.root = root}); },
      [staged, target = output, block]() mutable { target.view(-1).copy_(staged.narrow(0, block, target.numel())); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMeshcomm::alltoall(std::vector<at::Tensor>& outputs,
                                                              std::vector<at::Tensor>& inputs,
                                                              const c10d::AllToAllOptions& /*opts*/) {
  const auto ranks = static_cast<std::size_t>(getSize());
  if (outputs.size() != ranks || inputs.size() != ranks) {
    throw invalid_call("alltoall", fmt::format("output_tensor_list and input_tensor_list hold {} and {} tensors; give {} "
                                          "each",
                                          outputs.size(), inputs.size(), ranks));
  }
  std::vector<std::size_t> send_counts, recv_counts;
  for (std::size_t peer = 0; peer < ranks; ++peer) {
    (void)buffer_of(outputs[peer], "alltoall", "output_tensor_list[i]");
    send_counts.push_back(static_cast<std::size_t>(inputs[peer].numel()));
    recv_counts.push_back(static_cast<std::size_t>(outputs[peer].numel()));
  }
  auto sent = flat(inputs);
  auto received = at::empty({static_cast<std::int64_t>(std::accumulate(recv_counts.begin(), recv_counts.end(),
                                                                         std::size_t{0}))},
                            outputs[0].options());
  const auto in = buffer_of(sent, "alltoall", "input_tensor_list");
  const auto out = buffer_of(received, "alltoall", "output_tensor_list");
  std::vector<std::size_t> send_offsets(ranks, 0), recv_offsets(ranks, 0);
  std::exclusive_scan(send_counts.begin(), send_counts.end(), send_offsets.begin(), std::size_t{0});
  std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_offsets.begin(), std::size_t{0});
  return enqueue(
      c10d::OpType::ALLTOALL, outputs,
      [in, out, sent, received, send_counts, recv_counts, send_offsets, recv_offsets](Communicator& comm) {
        return comm.all_to_allv(in, out,
                                {.send_counts = send_counts, .send_offsets = send_offsets,
                                 .recv_counts = recv_counts, .recv_offsets = recv_offsets});
      },
      [received, targets = outputs]() mutable { split_into(received, targets); });
}

}  // namespace meshcomm::torch_plugin
