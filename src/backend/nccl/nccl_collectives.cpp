#include "nccl_collectives.hpp"

#include "collective_args.hpp"
#include "hot_path.hpp"
#include "nccl_channel.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

namespace {

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::f32: return ncclFloat32;
    case DataType::f64: return ncclFloat64;
    case DataType::f16: return ncclFloat16;
    case DataType::bf16: return ncclBfloat16;
    case DataType::i8: return ncclInt8;
    case DataType::u8: return ncclUint8;
    case DataType::i32: return ncclInt32;
    case DataType::u32: return ncclUint32;
    case DataType::i64: return ncclInt64;
    case DataType::u64: return ncclUint64;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

const std::byte* at(const void* base, std::size_t bytes) { return static_cast<const std::byte*>(base) + bytes; }
std::byte* at(void* base, std::size_t bytes) { return static_cast<std::byte*>(base) + bytes; }

/// Block p of `args.input` to rank p, block p of `args.output` from rank p, as one NCCL group.
/// Kept out of line, so that the single NCCL calls of the other collectives stay close together.
[[gnu::noinline]] ncclResult_t grouped_all_to_all(const CollectiveArgs& args, int ranks, ncclComm_t comm, cudaStream_t stream) {
  const std::size_t element = size_of(args.input.type);
  const bool uneven = args.kind == CollectiveKind::all_to_allv;
  const std::size_t block = uneven ? 0 : args.input.count / static_cast<std::size_t>(ranks);
  ncclResult_t first_error = ncclGroupStart();
  for (int peer = 0; peer < ranks && first_error == ncclSuccess; ++peer) {
    const std::size_t send_count = uneven ? args.layout.send_counts[peer] : block;
    const std::size_t send_at = uneven ? args.layout.send_offsets[peer] : block * peer;
    const std::size_t recv_count = uneven ? args.layout.recv_counts[peer] : block;
    const std::size_t recv_at = uneven ? args.layout.recv_offsets[peer] : block * peer;
    auto sent = ncclSend(at(args.input.data, send_at * element), send_count * element, ncclUint8, peer, comm, stream);
    auto received =
        ncclRecv(at(args.output.data, recv_at * element), recv_count * element, ncclUint8, peer, comm, stream);
    if (sent != ncclSuccess && sent != ncclInProgress) first_error = sent;
    if (received != ncclSuccess && received != ncclInProgress) first_error = received;
  }
  const ncclResult_t ended = ncclGroupEnd();
  return first_error != ncclSuccess ? first_error : ended;
}

}  // namespace

std::string nccl_collective_unsupported_reason(const CollectiveArgs& args) {
  if (nccl_runs_collective(args)) return {};
  if (args.output.memory != MemoryKind::cuda) return "NCCL's collectives move cuda memory, and this call has host memory";
  return "NCCL has no in-place all-to-all (its grouped sends would read blocks already overwritten)";
}

MESHCOMM_HOT std::shared_ptr<WorkState> start_nccl_collective(NcclChannel& channel, const CollectiveArgs& args,
                                                              int ranks, NcclCallSite site) {
  const auto stream = static_cast<cudaStream_t>(args.stream.native_handle());
  const ncclDataType_t type = nccl_type(args.output.type);
  const ncclRedOp_t op = nccl_op(args.op);
  return channel.enqueue(stream, site, [&](ncclComm_t comm) {
    switch (args.kind) {
      case CollectiveKind::all_gather:
        return ncclAllGather(args.input.data, args.output.data, args.input.count, type, comm, stream);
      case CollectiveKind::reduce_scatter:
        return ncclReduceScatter(args.input.data, args.output.data, args.output.count, type, op, comm, stream);
      case CollectiveKind::all_reduce:
        return ncclAllReduce(args.input.data, args.output.data, args.output.count, type, op, comm, stream);
      case CollectiveKind::broadcast:
        return ncclBroadcast(args.output.data, args.output.data, args.output.count, type, args.root, comm, stream);
      case CollectiveKind::all_to_all:
      case CollectiveKind::all_to_allv: return grouped_all_to_all(args, ranks, comm, stream);
    }
    return ncclInvalidArgument;
  });
}

}  // namespace meshcomm::detail
