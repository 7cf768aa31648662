#pragma once

// Checks of the nccl backend, run on ranks as threads (one GPU: one rank) and under mpirun.

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// Every collective's matrix on CUDA memory, all algorithms (NCCL's own as `native`, meshcomm's
/// over grouped ncclSend/ncclRecv).
void check_nccl_collective_matrices(Communicator& comm);

/// A collective queued on a stream is ordered with the stream's other work: its input is made by
/// a memset queued before it and its result read by a copy queued after it, with no host wait.
void check_nccl_stream_order(Communicator& comm);

/// Collectives queued back to back on one stream, some tested early: each work completes only
/// once its own call has run (outputs read on another stream right after each wait are right).
void check_nccl_back_to_back(Communicator& comm);

/// Halo exchanges on CUDA memory over NCCL: contents, adjoint and graph, both strategies.
void check_nccl_halo(Communicator& comm);

/// Host-memory traffic (barrier, split exchanges) and device collectives on a split communicator.
void check_nccl_split(Communicator& comm);

/// A receive nobody sends to times out instead of hanging, aborts the NCCL communicator, and
/// later calls fail fast naming the first error. Leaves `comm` unusable: run it last.
void check_nccl_timeout_aborts(Communicator& comm);

}  // namespace meshcomm::testing
