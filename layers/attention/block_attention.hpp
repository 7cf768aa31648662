#pragma once

#include <cstddef>
#include <cstdint>

namespace meshcomm::layers {

/// Shapes of one block-attention call: `query_rows` queries against `key_rows` keys, each row
/// [heads, head_dim], row-major (fp32, or fp64 for gradient checks). Rows carry global positions;
/// with `causal`, a query sees keys at positions <= its own; a `window` narrows that to the
/// `window` keys ending at the query (causal) or `window` keys on either side (not causal).
struct BlockShape {
  std::size_t query_rows = 0;
  std::size_t key_rows = 0;
  std::size_t heads = 1;
  std::size_t head_dim = 1;
  bool causal = false;
  std::size_t window = 0;  ///< 0: every key the mask allows
};

/// Attention of the queries over one block of keys, merged into a running result by
/// log-sum-exp in fp32 (online softmax): `out` [query_rows, heads, dim] and `lse`
/// [query_rows, heads] hold the result over every block merged so far; start them with zeros and
/// -infinity. A query that sees no key in any block keeps zeros and -infinity (never NaN).
template <class T>
void block_attention_forward(const T* queries, const std::int64_t* query_positions, const T* keys, const T* values,
                             const std::int64_t* key_positions, T* out, T* lse, const BlockShape& shape);

/// The gradients of one block, given the final `out` and `lse` of the forward pass and `delta` =
/// rowsum(d_out * out) per query and head: adds to `d_queries` (local) and to `d_keys`,
/// `d_values` (which travel with the block).
template <class T>
void block_attention_backward(const T* queries, const std::int64_t* query_positions, const T* keys, const T* values,
                              const std::int64_t* key_positions, const T* lse, const T* d_out, const T* delta,
                              T* d_queries, T* d_keys, T* d_values, const BlockShape& shape);

/// delta[q, h] = Σ_d d_out[q, h, d] * out[q, h, d], the row term of the softmax gradient.
template <class T>
void attention_delta(const T* out, const T* d_out, T* delta, std::size_t rows, std::size_t heads,
                     std::size_t head_dim);

}  // namespace meshcomm::layers
