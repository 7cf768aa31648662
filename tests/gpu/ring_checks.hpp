#pragma once

// RingPipeline checks on CUDA memory, run with ranks as threads and as processes.

#include "meshcomm/communicator.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {

/// Every rank's block travels the whole ring by `transfer` in `direction`: each rank reads what
/// it holds after every step with a copy queued on its compute stream (no host wait first) and
/// checks it exactly.
void check_ring_round(Communicator& comm, RingTransfer transfer, RingDirection direction);

}  // namespace meshcomm::testing
