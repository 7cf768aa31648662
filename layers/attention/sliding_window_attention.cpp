#include "sliding_window_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace meshcomm::layers {

namespace {

bool visible(std::int64_t query, std::int64_t key, const AttentionWindow& window, std::size_t sequence_rows) {
  if (key < 0 || key >= static_cast<std::int64_t>(sequence_rows)) return false;
  const auto size = static_cast<std::int64_t>(std::min<std::size_t>(window.size, sequence_rows + 1));
  if (window.causal) return key <= query && key > query - size;
  return key >= query - size && key <= query + size;
}

}  // namespace

void sliding_window_attention(const float* queries, const float* keys, const float* values, float* out,
                              const AttentionRows& rows, const AttentionWindow& window) {
  const std::size_t heads = rows.heads;
  const std::size_t dim = rows.head_dim;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
  std::vector<float> scores(rows.key_rows);
  for (std::size_t q = 0; q < rows.query_rows; ++q) {
    const std::int64_t query_position = rows.query_offset + static_cast<std::int64_t>(q);
    for (std::size_t h = 0; h < heads; ++h) {
      const float* query = queries + (q * heads + h) * dim;
      float* result = out + (q * heads + h) * dim;
      float best = -std::numeric_limits<float>::infinity();
      for (std::size_t k = 0; k < rows.key_rows; ++k) {
        const std::int64_t key_position = rows.key_offset + static_cast<std::int64_t>(k);
        if (!visible(query_position, key_position, window, rows.sequence_rows)) {
          scores[k] = -std::numeric_limits<float>::infinity();
          continue;
        }
        const float* key = keys + (k * heads + h) * dim;
        float dot = 0;
        for (std::size_t d = 0; d < dim; ++d) dot += query[d] * key[d];
        scores[k] = dot * scale;
        best = std::max(best, scores[k]);
      }
      std::fill(result, result + dim, 0.0F);
      if (best == -std::numeric_limits<float>::infinity()) continue;  // nothing visible
      float total = 0;
      for (std::size_t k = 0; k < rows.key_rows; ++k) {
        if (scores[k] == -std::numeric_limits<float>::infinity()) continue;
        const float weight = std::exp(scores[k] - best);
        total += weight;
        const float* value = values + (k * heads + h) * dim;
        for (std::size_t d = 0; d < dim; ++d) result[d] += weight * value[d];
      }
      for (std::size_t d = 0; d < dim; ++d) result[d] /= total;
    }
  }
}

}  // namespace meshcomm::layers
