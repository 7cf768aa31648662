#include "block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/gradient_mutation.hpp"

namespace meshcomm::layers {

namespace {

template <class T>
constexpr T kNegativeInfinity = -std::numeric_limits<T>::infinity();

bool visible(std::int64_t query, std::int64_t key, const BlockShape& shape) {
  const auto window = static_cast<std::int64_t>(shape.window);
  if (shape.causal) return key <= query && (window == 0 || query - key < window);
  return window == 0 || (key - query <= window && query - key <= window);
}

/// a·b with eight partial sums, so that the compiler vectorises it without reassociating floats.
template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  T partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t j = 0; j < 8; ++j) partial[j] += a[i + j] * b[i + j];
  }
  T sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

template <class T>
void block_attention_forward(const T* queries, const std::int64_t* query_positions, const T* keys, const T* values,
                             const std::int64_t* key_positions, T* out, T* lse, const BlockShape& shape) {
  const std::size_t heads = shape.heads;
  const std::size_t dim = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(dim));
  std::vector<T> scores(shape.key_rows);
  std::vector<T> block_out(dim);
  for (std::size_t q = 0; q < shape.query_rows; ++q) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T* query = queries + (q * heads + h) * dim;
      T best = kNegativeInfinity<T>;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (!visible(query_positions[q], key_positions[k], shape)) {
          scores[k] = kNegativeInfinity<T>;
          continue;
        }
        scores[k] = dot(query, keys + (k * heads + h) * dim, dim) * scale;
        best = std::max(best, scores[k]);
      }
      if (best == kNegativeInfinity<T>) continue;  // this block shows the query nothing
      std::fill(block_out.begin(), block_out.end(), T(0));
      T total = 0;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (scores[k] == kNegativeInfinity<T>) continue;
        const T weight = std::exp(scores[k] - best);
        total += weight;
        const T* value = values + (k * heads + h) * dim;
        for (std::size_t d = 0; d < dim; ++d) block_out[d] += weight * value[d];
      }
      const T block_lse = best + std::log(total);
      T* result = out + (q * heads + h) * dim;
      T& running = lse[q * heads + h];
      if (running == kNegativeInfinity<T>) {
        for (std::size_t d = 0; d < dim; ++d) result[d] = block_out[d] / total;
        running = block_lse;
        continue;
      }
      // Merge by log-sum-exp: both parts rescaled to the new total.
      const T top = std::max(running, block_lse);
      const T merged = top + std::log(std::exp(running - top) + std::exp(block_lse - top));
      const T keep = std::exp(running - merged);
      const T add = std::exp(block_lse - merged) / total;
      for (std::size_t d = 0; d < dim; ++d) result[d] = result[d] * keep + block_out[d] * add;
      running = merged;
    }
  }
}

template <class T>
void attention_delta(const T* out, const T* d_out, T* delta, std::size_t rows, std::size_t heads,
                     std::size_t head_dim) {
  for (std::size_t i = 0; i < rows * heads; ++i) delta[i] = dot(out + i * head_dim, d_out + i * head_dim, head_dim);
}

template <class T>
void block_attention_backward(const T* queries, const std::int64_t* query_positions, const T* keys, const T* values,
                              const std::int64_t* key_positions, const T* lse, const T* d_out, const T* delta,
                              T* d_queries, T* d_keys, T* d_values, const BlockShape& shape) {
  const std::size_t heads = shape.heads;
  const std::size_t dim = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(dim));
  const T row_term = active_gradient_mutation() == GradientMutation::drop_softmax_row_term ? T(0) : T(1);
  for (std::size_t q = 0; q < shape.query_rows; ++q) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T row_lse = lse[q * heads + h];
      if (row_lse == kNegativeInfinity<T>) continue;
      const std::size_t at = (q * heads + h) * dim;
      for (std::size_t k = 0; k < shape.key_rows; ++k) {
        if (!visible(query_positions[q], key_positions[k], shape)) continue;
        const std::size_t key_at = (k * heads + h) * dim;
        const T probability = std::exp(dot(queries + at, keys + key_at, dim) * scale - row_lse);
        const T d_probability = dot(d_out + at, values + key_at, dim);
        const T d_score = probability * (d_probability - row_term * delta[q * heads + h]) * scale;
        for (std::size_t d = 0; d < dim; ++d) {
          d_values[key_at + d] += probability * d_out[at + d];
          d_queries[at + d] += d_score * keys[key_at + d];
          d_keys[key_at + d] += d_score * queries[at + d];
        }
      }
    }
  }
}

template void block_attention_forward<float>(const float*, const std::int64_t*, const float*, const float*,
                                             const std::int64_t*, float*, float*, const BlockShape&);
template void block_attention_forward<double>(const double*, const std::int64_t*, const double*, const double*,
                                              const std::int64_t*, double*, double*, const BlockShape&);
template void block_attention_backward<float>(const float*, const std::int64_t*, const float*, const float*,
                                              const std::int64_t*, const float*, const float*, const float*, float*,
                                              float*, float*, const BlockShape&);
template void block_attention_backward<double>(const double*, const std::int64_t*, const double*, const double*,
                                               const std::int64_t*, const double*, const double*, const double*,
                                               double*, double*, double*, const BlockShape&);
template void attention_delta<float>(const float*, const float*, float*, std::size_t, std::size_t, std::size_t);
template void attention_delta<double>(const double*, const double*, double*, std::size_t, std::size_t, std::size_t);

}  // namespace meshcomm::layers
