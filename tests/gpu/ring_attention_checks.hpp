#pragma once

// RingAttention on the GPU as an implementation for the ring attention checks: the case's host
// tensors are staged to device memory, run through DeviceRingAttention, and read back.

#include "cases/ring_cases.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {

/// DeviceRingAttention moving blocks by `transfer`, on a stream of each rank's own.
RingAttentionRun device_ring_attention(RingTransfer transfer);

}  // namespace meshcomm::testing
