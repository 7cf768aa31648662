#include "block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace meshcomm::layers {

namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

bool visible(std::int64_t query, std::int64_t key, bool causal) { return !causal || key <= query; }

}  // namespace

void block_attention_forward(const float* queries, const std::int64_t* query_positions, const float* keys,
                             const float* values, const std::int64_t* key_positions, float* out, float* lse,
                             const BlockShape& shape) {
  const std::size_t heads = shape.heads;
  const std::size_t dim = shape.head_dim;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
  std::vector<float> scores(shape.key_rows);
  std::vector<float> block_out(dim);
  for (std::size_t q = 0; q < shape.query_rows; ++q) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* query = queries + (q * heads + h) * dim;
      float best = kNegativeInfinity;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (!visible(query_positions[q], key_positions[k], shape.causal)) {
          scores[k] = kNegativeInfinity;
          continue;
        }
        const float* key = keys + (k * heads + h) * dim;
        float dot = 0;
        for (std::size_t d = 0; d < dim; ++d) dot += query[d] * key[d];
        scores[k] = dot * scale;
        best = std::max(best, scores[k]);
      }
      if (best == kNegativeInfinity) continue;  // this block shows the query nothing
      std::fill(block_out.begin(), block_out.end(), 0.0F);
      float total = 0;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (scores[k] == kNegativeInfinity) continue;
        const float weight = std::exp(scores[k] - best);
        total += weight;
        const float* value = values + (k * heads + h) * dim;
        for (std::size_t d = 0; d < dim; ++d) block_out[d] += weight * value[d];
      }
      const float block_lse = best + std::log(total);
      float* result = out + (q * heads + h) * dim;
      float& running = lse[q * heads + h];
      if (running == kNegativeInfinity) {
        for (std::size_t d = 0; d < dim; ++d) result[d] = block_out[d] / total;
        running = block_lse;
        continue;
      }
      // Merge by log-sum-exp: both parts rescaled to the new total.
      const float top = std::max(running, block_lse);
      const float merged = top + std::log(std::exp(running - top) + std::exp(block_lse - top));
      const float keep = std::exp(running - merged);
      const float add = std::exp(block_lse - merged) / total;
      for (std::size_t d = 0; d < dim; ++d) result[d] = result[d] * keep + block_out[d] * add;
      running = merged;
    }
  }
}

void attention_delta(const float* out, const float* d_out, float* delta, std::size_t rows, std::size_t heads,
                     std::size_t head_dim) {
  for (std::size_t i = 0; i < rows * heads; ++i) {
    float sum = 0;
    for (std::size_t d = 0; d < head_dim; ++d) sum += out[i * head_dim + d] * d_out[i * head_dim + d];
    delta[i] = sum;
  }
}

void block_attention_backward(const float* queries, const std::int64_t* query_positions, const float* keys,
                              const float* values, const std::int64_t* key_positions, const float* lse,
                              const float* d_out, const float* delta, float* d_queries, float* d_keys,
                              float* d_values, const BlockShape& shape) {
  const std::size_t heads = shape.heads;
  const std::size_t dim = shape.head_dim;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
  for (std::size_t q = 0; q < shape.query_rows; ++q) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float row_lse = lse[q * heads + h];
      if (row_lse == kNegativeInfinity) continue;
      const std::size_t at = (q * heads + h) * dim;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (!visible(query_positions[q], key_positions[k], shape.causal)) continue;
        const std::size_t key_at = (k * heads + h) * dim;
        float dot = 0;
        float d_probability = 0;
        for (std::size_t d = 0; d < dim; ++d) {
          dot += queries[at + d] * keys[key_at + d];
          d_probability += d_out[at + d] * values[key_at + d];
        }
        const float probability = std::exp(dot * scale - row_lse);
        const float d_score = probability * (d_probability - delta[q * heads + h]) * scale;
        for (std::size_t d = 0; d < dim; ++d) {
          d_values[key_at + d] += probability * d_out[at + d];
          d_queries[at + d] += d_score * keys[key_at + d];
          d_keys[key_at + d] += d_score * queries[at + d];
        }
      }
    }
  }
}

}  // namespace meshcomm::layers
