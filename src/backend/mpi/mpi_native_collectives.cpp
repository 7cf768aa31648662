// The mpi backend's native collectives: Open MPI's nonblocking collectives, polled with a
// timeout, each on the communicator of its shape (MpiNativeShapes). A collective request cannot
// be cancelled, so a timeout makes the communicator fatal.

#include <climits>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "call_record.hpp"
#include "collective_args.hpp"
#include "mpi_backend.hpp"
#include "mpi_check.hpp"
#include "mpi_collective_request.hpp"
#include "mpi_datatypes.hpp"
#include "plain_copy.hpp"
#include "reduction.hpp"

namespace meshcomm::detail {

namespace {

int as_int(std::size_t value) { return static_cast<int>(value); }

}  // namespace

std::string MpiBackend::native_unsupported_reason(const CollectiveArgs& args) const {
  if (reduces(args.kind) && mpi_type(args.input.type) == MPI_DATATYPE_NULL) {
    return fmt::format("MPI has no {} type to reduce", to_string(args.input.type));
  }
  if (args.bytes() > static_cast<std::size_t>(INT_MAX)) {
    return fmt::format("MPI counts are int and {} bytes do not fit", args.bytes());
  }
  return {};
}

std::shared_ptr<WorkState> MpiBackend::start_native(const CollectiveArgs& args) {
  if (const MPI_Comm comm = native_shapes_->ready_comm(CallRecord::of(args).shape()); comm != MPI_COMM_NULL)
      [[likely]] {
    return post_native(args, comm);
  }
  return native_shapes_->defer(args, context(args.label, -1));
}

std::shared_ptr<WorkState> MpiBackend::post_native(const CollectiveArgs& args, MPI_Comm comm) {
  auto operation = std::make_shared<MpiCollectiveRequest>(context(args.label, -1), fatal_state(), &processes_);
  operation->report_timeouts_with(timeout_reports_.get(), CallRecord::of(args));
  const ErrorContext& where = operation->context();
  const void* input = args.in_place ? MPI_IN_PLACE : args.input.data;
  auto* request = &operation->request;
  switch (args.kind) {
    case CollectiveKind::all_gather: {
      const int bytes = as_int(args.input.bytes());
      check_mpi(MPI_Iallgather(input, bytes, MPI_BYTE, args.output.data, bytes, MPI_BYTE, comm, request),
                "MPI_Iallgather", where);
      break;
    }
    case CollectiveKind::reduce_scatter: {
      // MPI's in-place form reads the whole input from the receive buffer and leaves the result
      // at its start; meshcomm's in-place output is this rank's block, so move it there after.
      void* receive = args.in_place ? const_cast<void*>(args.input.data) : args.output.data;
      check_mpi(MPI_Ireduce_scatter_block(input, receive, as_int(args.output.count), mpi_type(args.output.type),
                                          mpi_op(args.op), comm, request),
                "MPI_Ireduce_scatter_block", where);
      operation->after = [args, receive, size = size_] {
        if (receive != args.output.data) std::memmove(args.output.data, receive, args.output.bytes());
        if (args.op == ReduceOp::avg) divide_for_average(args.output.data, args.output.count, args.output.type, size);
      };
      break;
    }
    case CollectiveKind::all_reduce:
      check_mpi(MPI_Iallreduce(input, args.output.data, as_int(args.output.count), mpi_type(args.output.type),
                               mpi_op(args.op), comm, request),
                "MPI_Iallreduce", where);
      if (args.op == ReduceOp::avg) {
        operation->after = [args, size = size_] {
          divide_for_average(args.output.data, args.output.count, args.output.type, size);
        };
      }
      break;
    case CollectiveKind::all_to_all: {
      const std::size_t block = args.input.bytes() / static_cast<std::size_t>(size_);
      if (!args.in_place) {
        check_mpi(MPI_Ialltoall(args.input.data, as_int(block), MPI_BYTE, args.output.data, as_int(block), MPI_BYTE,
                                comm, request),
                  "MPI_Ialltoall", where);
        break;
      }
      // Open MPI's nonblocking all-to-all has no in-place form: the peers' blocks are sent from a
      // copy, and this rank's own block, already in place, is left out (an all-to-all-v with no
      // bytes to itself), so that only (size-1)/size of the buffer is copied.
      operation->scratch = scratch_.acquire(args.input.bytes());
      auto& counts = operation->counts;
      counts.assign(2 * static_cast<std::size_t>(size_), 0);
      for (int peer = 0; peer < size_; ++peer) {
        const std::size_t at = static_cast<std::size_t>(peer) * block;
        counts[static_cast<std::size_t>(size_ + peer)] = as_int(at);
        if (peer == rank_) continue;
        counts[static_cast<std::size_t>(peer)] = as_int(block);
        plain_copy(operation->scratch.get() + at, static_cast<const std::byte*>(args.input.data) + at, block);
      }
      const int* sizes = counts.data();
      const int* offsets = counts.data() + size_;
      check_mpi(MPI_Ialltoallv(operation->scratch.get(), sizes, offsets, MPI_BYTE, args.output.data, sizes, offsets,
                               MPI_BYTE, comm, request),
                "MPI_Ialltoallv", where);
      break;
    }
    case CollectiveKind::all_to_allv: {
      const std::size_t element = size_of(args.input.type);
      auto& counts = operation->counts;
      for (auto span : {args.layout.send_counts, args.layout.send_offsets, args.layout.recv_counts,
                        args.layout.recv_offsets}) {
        for (auto value : span) counts.push_back(as_int(value * element));
      }
      const int* base = counts.data();
      check_mpi(MPI_Ialltoallv(args.input.data, base, base + size_, MPI_BYTE, args.output.data, base + 2 * size_,
                               base + 3 * size_, MPI_BYTE, comm, request),
                "MPI_Ialltoallv", where);
      break;
    }
    case CollectiveKind::broadcast:
      check_mpi(MPI_Ibcast(args.output.data, as_int(args.output.bytes()), MPI_BYTE, args.root, comm, request),
                "MPI_Ibcast", where);
      break;
  }
  return operation;
}

}  // namespace meshcomm::detail
