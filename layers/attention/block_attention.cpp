#include "block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace meshcomm::layers {

namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

bool visible(std::int64_t query, std::int64_t key, bool causal) { return !causal || key <= query; }

/// a·b with eight partial sums, so that the compiler vectorises it without reassociating floats.
float dot(const float* a, const float* b, std::size_t n) {
  float partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t j = 0; j < 8; ++j) partial[j] += a[i + j] * b[i + j];
  }
  float sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

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
        scores[k] = dot(query, keys + (k * heads + h) * dim, dim) * scale;
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
  for (std::size_t i = 0; i < rows * heads; ++i) delta[i] = dot(out + i * head_dim, d_out + i * head_dim, head_dim);
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
        const float probability = std::exp(dot(queries + at, keys + key_at, dim) * scale - row_lse);
        const float d_probability = dot(d_out + at, values + key_at, dim);
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
