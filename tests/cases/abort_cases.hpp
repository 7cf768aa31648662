#pragma once

// Checks of Communicator::abort(), written once and run both on threads-as-ranks (inproc) and
// under mpirun (mpi). Collective over `world`; uses GoogleTest assertions.

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// Rank 0 starts operations its peers never answer (a receive, a send, a ring all-gather and,
/// where the backend has them, native all-gathers of an agreed and of a new shape), and a
/// watchdog thread aborts the
/// communicator: every pending work fails with `aborted` (not `timeout`: the waits allow a
/// minute), later calls fail fast, and a message the peer sends afterwards is never written into
/// the withdrawn receive's buffer. Prints how long abort() and the first failed wait took.
void check_abort(Communicator& world);

}  // namespace meshcomm::testing
