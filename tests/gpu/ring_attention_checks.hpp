#pragma once

// RingAttention on the GPU as an implementation for the ring attention checks: the case's host
// tensors are staged to device memory, run through DeviceRingAttention, and read back.

#include "cases/ring_cases.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {

/// DeviceRingAttention moving blocks by `transfer`, on a stream of each rank's own; scores in
/// tiles of at most `score_bytes` (0: the default bound).
RingAttentionRun device_ring_attention(RingTransfer transfer, std::size_t score_bytes = 0);

}  // namespace meshcomm::testing
