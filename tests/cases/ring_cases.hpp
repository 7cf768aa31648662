#pragma once

// RingPipeline and RingAttention checks, run on threads-as-ranks (inproc) and under mpirun.

#include "attention/sequence_layout.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {

/// Blocks travel the ring in `direction`: at step s each rank holds the block of rank ∓ s, and a
/// second start before advance is an error.
void check_ring_pipeline(Communicator& comm, RingDirection direction);

/// Ring attention (forward: out; backward: dQ, dK, dV) equals single-rank attention within 1e-5
/// relative, for `layout`, causal or not. Returns the largest relative error seen.
double check_ring_attention(Communicator& comm, layers::SequenceLayout layout, bool causal);

}  // namespace meshcomm::testing
