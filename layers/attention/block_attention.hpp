#pragma once

#include <cstddef>
#include <cstdint>

namespace meshcomm::layers {

/// Shapes of one block-attention call: `query_rows` queries against `key_rows` keys, each row
/// [heads, head_dim] fp32, row-major. Rows carry global positions; with `causal`, a query sees
/// keys at positions <= its own.
struct BlockShape {
  std::size_t query_rows = 0;
  std::size_t key_rows = 0;
  std::size_t heads = 1;
  std::size_t head_dim = 1;
  bool causal = false;
};

/// Attention of the queries over one block of keys, merged into a running result by
/// log-sum-exp in fp32 (online softmax): `out` [query_rows, heads, dim] and `lse`
/// [query_rows, heads] hold the result over every block merged so far; start them with zeros and
/// -infinity. A query that sees no key in any block keeps zeros and -infinity (never NaN).
void block_attention_forward(const float* queries, const std::int64_t* query_positions, const float* keys,
                             const float* values, const std::int64_t* key_positions, float* out, float* lse,
                             const BlockShape& shape);

/// The gradients of one block, given the final `out` and `lse` of the forward pass and `delta` =
/// rowsum(d_out * out) per query and head: adds to `d_queries` (local) and to `d_keys`,
/// `d_values` (which travel with the block).
void block_attention_backward(const float* queries, const std::int64_t* query_positions, const float* keys,
                              const float* values, const std::int64_t* key_positions, const float* lse,
                              const float* d_out, const float* delta, float* d_queries, float* d_keys,
                              float* d_values, const BlockShape& shape);

/// delta[q, h] = Σ_d d_out[q, h, d] * out[q, h, d], the row term of the softmax gradient.
void attention_delta(const float* out, const float* d_out, float* delta, std::size_t rows, std::size_t heads,
                     std::size_t head_dim);

}  // namespace meshcomm::layers
