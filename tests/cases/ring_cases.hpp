#pragma once

// RingPipeline and RingAttention checks, run on threads-as-ranks (inproc) and under mpirun.

#include <functional>
#include <vector>

#include "attention/ring_attention.hpp"
#include "attention/sequence_layout.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {

/// Blocks travel the ring in `direction`: at step s each rank holds the block of rank ∓ s, and a
/// second start before advance is an error.
void check_ring_pipeline(Communicator& comm, RingDirection direction);

/// One rank's share of a ring attention problem (host memory) and what it must produce.
struct RingAttentionCase {
  layers::RingAttentionShape shape;
  std::vector<std::int64_t> positions;
  std::vector<float> queries, keys, values, d_out;  ///< this rank's rows
  std::vector<float> out, d_queries, d_keys, d_values;  ///< filled by the implementation
};

/// A ring attention implementation under test: fills the case's outputs (forward and backward).
using RingAttentionRun = std::function<void(Communicator&, RingAttentionCase&)>;

/// The host implementation (ring_attention_forward and ring_attention_backward).
void run_host_ring_attention(Communicator& comm, RingAttentionCase& problem);

/// The host implementation planned once (RingAttention) and run twice, the second run's results
/// kept: its pipelines carry over from one call to the next.
void run_host_ring_attention_twice(Communicator& comm, RingAttentionCase& problem);

/// Ring attention (forward: out; backward: dQ, dK, dV) by `run` equals single-rank attention
/// within `tolerance` relative to the largest reference value, for `layout`, causal or not, on
/// `sequence_per_rank` x P rows of `heads` x `head_dim`. Returns the largest relative error seen.
double check_ring_attention(Communicator& comm, layers::SequenceLayout layout, bool causal,
                            const RingAttentionRun& run = run_host_ring_attention, double tolerance = 1e-5,
                            std::size_t sequence_per_rank = 6, std::size_t heads = 2, std::size_t head_dim = 8);

}  // namespace meshcomm::testing
