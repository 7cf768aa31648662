#pragma once

// The eager path of small collectives (shared slots), beyond the collective matrix: ranks that run
// ahead of each other by more operations than there are slots, and a rank left waiting alone.

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// Every rank starts three times as many small collectives as there are slots without waiting
/// (one rank late), then waits for them newest first: every result is exact.
void check_eager_calls_run_ahead(Communicator& world);

/// One rank calls a small collective that the others never make: its wait times out naming a
/// rank that never arrived; the world stays usable.
void check_eager_timeout_names_a_missing_rank(Communicator& world);

}  // namespace meshcomm::testing
