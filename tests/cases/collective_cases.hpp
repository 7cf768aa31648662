#pragma once

// The collective test matrix, written once and run on threads-as-ranks (inproc) and under mpirun
// (mpi): every algorithm of a collective × dtypes × ops × counts × in place or not, each checked
// exactly against predictable data (small integers, exact in every dtype including f16 and bf16).

#include <cstddef>
#include <string>
#include <vector>

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// One call to check.
struct CollectiveCase {
  CollectiveKind kind;
  std::string algorithm;
  DataType type;
  ReduceOp op = ReduceOp::sum;
  std::size_t count = 0;  // per-rank elements: input of all_gather, output of reduce_scatter, total otherwise
  bool in_place = false;
  int root = 0;
  MemoryKind memory = MemoryKind::host;
  [[nodiscard]] std::string describe() const;
};

/// Every case of `kind` for `comm`: each algorithm it offers, every dtype and op, counts 0, 1,
/// odd, a count not divisible by the size where allowed, and one large count for f32 that spans
/// several pipeline chunks.
std::vector<CollectiveCase> collective_matrix(const Communicator& comm, CollectiveKind kind,
                                              MemoryKind memory = MemoryKind::host);

/// Runs `c` on every rank of `comm` and checks the result exactly. Returns false (with a
/// GoogleTest failure) on a wrong element, true also when the algorithm reports it cannot run
/// the case (`skipped` is then set).
bool check_collective(Communicator& comm, const CollectiveCase& c, bool& skipped);

/// Counts whose bytes, or whose product with the communicator size, would wrap size_t are
/// refused on every rank, naming the argument, before anything moves; the communicator stays usable.
void check_counts_that_would_wrap(Communicator& comm);

/// Ranks that disagree about a collective (another count, dtype, kind or reduction op on one
/// rank), on every algorithm of meshcomm's own: every rank gets an error (a timeout naming a peer,
/// or a size mismatch), none returns success, none crashes. Each case runs on a communicator split
/// off for it, which it may leave fatal; `world` stays usable.
void check_mismatched_calls(Communicator& world);

/// With MESHCOMM_DEBUG=fingerprint in force when `comm` was created: ranks that disagree about a
/// collective (count, dtype, kind, reduction op, root) get the same invalid_argument on every
/// rank, listing each rank's call, on every algorithm including `native`; `comm` stays usable.
void check_fingerprint_exchange(Communicator& comm);

/// With MESHCOMM_DEBUG=callsite in force when `comm` was created: the last rank skips the first
/// of two all-gathers of the same shape made from different lines, and every rank gets the same
/// invalid_argument at the first, listing each rank's call with its file and line.
void check_call_site_exchange(Communicator& comm);

/// Runs the whole matrix of `kind` on buffers in `memory` and fails if no case ran.
void check_collective_matrix(Communicator& comm, CollectiveKind kind, MemoryKind memory = MemoryKind::host);

}  // namespace meshcomm::testing
