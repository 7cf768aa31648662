#pragma once

// RingAttention on CUDA memory: K and V travel a RingPipeline on the GPU (copy engines or a
// copy kernel) while cuBLAS-based block attention runs on the compute stream, with no host
// synchronisation between steps. Blocks that a causal mask hides are skipped, and only the
// visible part of the others is computed, so the zigzag layout balances the work.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "attention/ring_attention.hpp"
#include "meshcomm/ring_pipeline.hpp"
#include "meshcomm/stream.hpp"

namespace meshcomm::layers {

/// Where a DeviceRingAttention queues its work and how its blocks move.
struct DeviceRingOptions {
  StreamRef stream;  ///< the compute stream (none: the legacy default stream)
  RingTransfer transfer = RingTransfer::automatic;
  /// SMs the attention's GEMMs leave free (cuBLAS's SM count target), so that an `sm_copy`
  /// transfer finds some beside them; 0: the GEMMs may take every SM.
  int reserve_sms = 0;
  /// Bound on one tile of scores (two are kept): blocks are attended a tile of query rows at a
  /// time, so long sequences need no more scratch than this.
  std::size_t score_bytes = std::size_t{1} << 30;
};

/// RingAttention (fp32) over the ranks of `ring`, on device buffers: planned once, run many
/// times. Every call is queued on the options' stream and returns without waiting for the GPU;
/// later work on that stream sees the results. Built without CUDA, creating one throws
/// Error(unsupported).
class DeviceRingAttention {
 public:
  /// Collective over `ring`. `positions` (host memory) are the global positions of this rank's
  /// `shape.rows` rows; every rank must hold the same number of rows.
  DeviceRingAttention(Communicator& ring, const RingAttentionShape& shape, std::span<const std::int64_t> positions,
                      const DeviceRingOptions& options = {});
  ~DeviceRingAttention();
  DeviceRingAttention(const DeviceRingAttention&) = delete;
  DeviceRingAttention& operator=(const DeviceRingAttention&) = delete;

  /// As ring_attention_forward: `out` [rows, heads, dim] and `lse` [rows, heads] (device).
  /// Collective.
  void forward(const float* queries, const float* keys, const float* values, float* out, float* lse);

  /// As ring_attention_backward: dQ stays local, dK and dV travel back to their owners. Collective.
  void backward(const float* queries, const float* keys, const float* values, const float* out, const float* lse,
                const float* d_out, float* d_queries, float* d_keys, float* d_values);

  /// The forward's block attentions alone (each rank's own K and V standing in for every block),
  /// for measuring overlap. Local.
  void forward_compute_alone(const float* queries, const float* keys, const float* values, float* out, float* lse);

  /// The forward's P - 1 ring transfers alone, for measuring overlap. Collective.
  void forward_transfers_alone();

  /// Bytes of one K/V block on the ring.
  [[nodiscard]] std::size_t block_bytes() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace meshcomm::layers
