#include "inproc_backend.hpp"

#include <algorithm>

#include "device/device_runtime.hpp"

namespace meshcomm::detail {

bool InprocBackend::moves(MemoryKind memory) const noexcept {
  return memory == MemoryKind::host || (memory == MemoryKind::cuda && device::built());
}

std::shared_ptr<WorkState> InprocBackend::post(bool is_send, void* buffer, std::size_t bytes, MemoryKind memory,
                                               int peer, int tag, Lane lane, OperationLabel label) {
  auto operation = std::make_shared<InprocOperation>(
      group_,
      InprocOperation::Description{.is_send = is_send, .owner = rank_, .peer = peer, .tag = tag, .lane = lane,
                                   .bytes = bytes, .memory = memory, .context = context(label, peer)},
      buffer);
  group_->post(operation);
  return operation;
}

std::shared_ptr<WorkState> InprocBackend::isend(ConstBufferView data, int peer, int tag, Lane lane,
                                                OperationLabel label, StreamRef) {
  // The send side only ever reads through this pointer.
  return post(true, const_cast<void*>(data.data), data.bytes(), data.memory, peer, tag, lane, label);
}

std::shared_ptr<WorkState> InprocBackend::irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                                StreamRef) {
  return post(false, data.data, data.bytes(), data.memory, peer, tag, lane, label);
}

void InprocBackend::abort(const Error& cause) {
  Backend::abort(cause);
  for (const auto& operation : group_->withdraw_all_of(rank_)) {
    const auto& d = operation->description();
    const auto outcome = withdrawal_outcome(d.is_send, d.bytes, d.peer, true);
    operation->complete(std::make_exception_ptr(fatal_state()->aborted_error(d.context, outcome)));
  }
}

std::unique_ptr<Backend> InprocBackend::split(std::span<const int> members, int color, std::uint64_t split_index) {
  const auto me = std::find(members.begin(), members.end(), rank_);
  const int new_rank = static_cast<int>(me - members.begin());
  const int new_size = static_cast<int>(members.size());
  return std::make_unique<InprocBackend>(group_->child(split_index, color, new_size), new_rank, new_size);
}

}  // namespace meshcomm::detail
