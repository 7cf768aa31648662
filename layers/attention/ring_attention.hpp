#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::layers {

/// One rank's share of a RingAttention call: `rows` query/key/value rows of [heads, head_dim]
/// (fp32, or fp64 for gradient checks) at the global `positions` its layout gives (equal row
/// counts on every rank).
struct RingAttentionShape {
  std::size_t rows = 0;
  std::size_t heads = 1;
  std::size_t head_dim = 1;
  bool causal = false;
};

/// Where a ring call spent its time, for ring_perf.
struct RingAttentionTimes {
  double compute_seconds = 0;  ///< block attention
  double wait_seconds = 0;     ///< waiting for transfers that had not finished behind the compute
};

/// RingAttention planned once for a shape: the K/V and gradient pipelines (their buffers and
/// progress threads) live from one call to the next. `ring` must outlive it. `T` is float or
/// double.
template <class T>
class RingAttention {
 public:
  /// Local: allocates the K/V pipeline (the gradients' at the first backward).
  RingAttention(Communicator& ring, const RingAttentionShape& shape);

  /// As ring_attention_forward. Collective.
  void forward(const T* queries, const T* keys, const T* values, const std::int64_t* positions, T* out, T* lse,
               RingAttentionTimes* times = nullptr);
  /// As ring_attention_backward. Collective.
  void backward(const T* queries, const T* keys, const T* values, const std::int64_t* positions, const T* out,
                const T* lse, const T* d_out, T* d_queries, T* d_keys, T* d_values,
                RingAttentionTimes* times = nullptr);

 private:
  Communicator& ring_;
  RingAttentionShape shape_;
  RingPipeline kv_;
  std::optional<RingPipeline> gradients_;
  std::vector<T> share_;  // this rank's dK | dV of the block it holds
  std::vector<T> delta_;
};

/// Forward: K and V (with their positions) travel the ring on a RingPipeline while each rank
/// attends with its own queries to the block it holds; partial results merge by log-sum-exp.
/// Writes `out` [rows, heads, dim] and `lse` [rows, heads] (kept for the backward pass). A
/// RingAttention made for this one call; keep one to run many.
template <class T>
void ring_attention_forward(Communicator& ring, const T* queries, const T* keys, const T* values,
                            const std::int64_t* positions, T* out, T* lse, const RingAttentionShape& shape,
                            RingAttentionTimes* times = nullptr);

/// Backward: dQ stays local; the dK and dV of each block travel with it and arrive back at the
/// block's owner after a full circle.
template <class T>
void ring_attention_backward(Communicator& ring, const T* queries, const T* keys, const T* values,
                             const std::int64_t* positions, const T* out, const T* lse, const T* d_out, T* d_queries,
                             T* d_keys, T* d_values, const RingAttentionShape& shape,
                             RingAttentionTimes* times = nullptr);

}  // namespace meshcomm::layers
