#include "reference_attention.hpp"

#include <algorithm>
#include <cmath>

namespace meshcomm::layers {

ReferenceAttention reference_attention(const std::vector<float>& queries, const std::vector<float>& keys,
                                       const std::vector<float>& values, const std::vector<float>& d_out,
                                       std::size_t sequence, std::size_t heads, std::size_t head_dim, bool causal) {
  const std::size_t row = heads * head_dim;
  ReferenceAttention result;
  result.out.assign(sequence * row, 0.0F);
  std::vector<double> d_q(sequence * row, 0.0), d_k(sequence * row, 0.0), d_v(sequence * row, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  std::vector<double> probability(sequence);
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t q = 0; q < sequence; ++q) {
      const std::size_t last = causal ? q + 1 : sequence;
      double best = -1e300;
      for (std::size_t k = 0; k < last; ++k) {
        double dot = 0;
        for (std::size_t d = 0; d < head_dim; ++d) {
          dot += static_cast<double>(queries[q * row + h * head_dim + d]) * keys[k * row + h * head_dim + d];
        }
        probability[k] = dot * scale;
        best = std::max(best, probability[k]);
      }
      double total = 0;
      for (std::size_t k = 0; k < last; ++k) total += (probability[k] = std::exp(probability[k] - best));
      std::vector<double> out(head_dim, 0.0);
      for (std::size_t k = 0; k < last; ++k) {
        probability[k] /= total;
        for (std::size_t d = 0; d < head_dim; ++d) out[d] += probability[k] * values[k * row + h * head_dim + d];
      }
      double delta = 0;
      for (std::size_t d = 0; d < head_dim; ++d) {
        result.out[q * row + h * head_dim + d] = static_cast<float>(out[d]);
        delta += out[d] * d_out[q * row + h * head_dim + d];
      }
      for (std::size_t k = 0; k < last; ++k) {
        double d_probability = 0;
        for (std::size_t d = 0; d < head_dim; ++d) {
          d_probability += static_cast<double>(d_out[q * row + h * head_dim + d]) * values[k * row + h * head_dim + d];
        }
        const double d_score = probability[k] * (d_probability - delta) * scale;
        for (std::size_t d = 0; d < head_dim; ++d) {
          d_v[k * row + h * head_dim + d] += probability[k] * d_out[q * row + h * head_dim + d];
          d_q[q * row + h * head_dim + d] += d_score * keys[k * row + h * head_dim + d];
          d_k[k * row + h * head_dim + d] += d_score * queries[q * row + h * head_dim + d];
        }
      }
    }
  }
  result.d_queries.assign(d_q.begin(), d_q.end());
  result.d_keys.assign(d_k.begin(), d_k.end());
  result.d_values.assign(d_v.begin(), d_v.end());
  return result;
}

}  // namespace meshcomm::layers
