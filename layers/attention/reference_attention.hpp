#pragma once

#include <cstddef>
#include <vector>

namespace meshcomm::layers {

/// Whole-sequence attention in double precision, the single-rank reference for the ring: rows
/// are [sequence, heads, head_dim], positions are row indices.
struct ReferenceAttention {
  std::vector<float> out;
  std::vector<float> d_queries, d_keys, d_values;
};

/// Forward (out) and backward (gradients for `d_out`) of softmax(QK^T/√d)V, causal or not.
ReferenceAttention reference_attention(const std::vector<float>& queries, const std::vector<float>& keys,
                                       const std::vector<float>& values, const std::vector<float>& d_out,
                                       std::size_t sequence, std::size_t heads, std::size_t head_dim, bool causal);

}  // namespace meshcomm::layers
