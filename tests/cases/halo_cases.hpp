#pragma once

// Halo exchange checks, written once and run on threads-as-ranks (inproc) and under mpirun.

#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/halo.hpp"

namespace meshcomm::testing {

/// The strategies `comm`'s backend offers.
std::vector<HaloStrategy> halo_strategies(const Communicator& comm);

/// Exact halo contents for uneven shards: widths 0, 1, shard-1 and wider than a shard (several
/// hops), periodic and not, dense and strided rows; extended buffers in `memory`.
void check_halo_contents(Communicator& comm, HaloStrategy strategy, MemoryKind memory = MemoryKind::host);
/// The adjoint is the exact transpose of the forward: <forward(x), y> = <x, adjoint(y)>.
void check_halo_adjoint(Communicator& comm, HaloStrategy strategy, MemoryKind memory = MemoryKind::host);
/// The graph form moves the named rows to the named peers.
void check_halo_graph(Communicator& comm, HaloStrategy strategy, MemoryKind memory = MemoryKind::host);
/// Negative widths, widths beyond the sequence and specs that differ across ranks are errors
/// that name the value; the communicator stays usable.
void check_halo_errors(Communicator& comm);
/// HeadTranspose moves every element exactly, both ways, for uneven shards; tensors in `memory`
/// (ordered on a stream of the rank's own when cuda).
void check_head_transpose(Communicator& comm, MemoryKind memory = MemoryKind::host);
/// Sliding-window attention of halo-extended shards, and of the head-sharded transpose, equals
/// unsharded attention (causal window and symmetric window).
void check_sliding_window_attention(Communicator& comm, HaloStrategy strategy);

}  // namespace meshcomm::testing
