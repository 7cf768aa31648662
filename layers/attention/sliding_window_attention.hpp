#pragma once

#include <cstddef>
#include <cstdint>

namespace meshcomm::layers {

/// Which keys a query sees.
struct AttentionWindow {
  /// Causal: the `size` keys ending at the query (a query at position q sees q-size+1 .. q, so it
  /// needs size-1 rows of left halo). Symmetric: `size` keys on each side (q-size .. q+size).
  bool causal = true;
  std::size_t size = 1;
  /// Whole-sequence attention: the window covers everything (causal or not).
  [[nodiscard]] static AttentionWindow full(bool causal) { return {causal, SIZE_MAX / 4}; }
};

/// Where the rows of a local attention call sit in the whole sequence. Tensors are row-major
/// [rows, heads, head_dim] fp32.
struct AttentionRows {
  std::size_t query_rows = 0;
  std::int64_t query_offset = 0;  ///< global position of query row 0
  std::size_t key_rows = 0;
  std::int64_t key_offset = 0;    ///< global position of key row 0 (negative under a left halo)
  std::size_t sequence_rows = 0;  ///< keys outside [0, sequence_rows) do not exist
  std::size_t heads = 1;
  std::size_t head_dim = 1;
};

/// Reference sliding-window attention, fp32: out[q,h] = Σ_k softmax_k(Q[q,h]·K[k,h] / √dim) V[k,h]
/// over the visible keys. A query with no visible key gets zeros, never NaN.
void sliding_window_attention(const float* queries, const float* keys, const float* values, float* out,
                              const AttentionRows& rows, const AttentionWindow& window);

}  // namespace meshcomm::layers
