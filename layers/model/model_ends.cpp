#include "model/model_ends.hpp"

#include <cmath>
#include <vector>

#include "ops/cross_entropy.hpp"
#include "ops/linear.hpp"
#include "ops/rms_norm.hpp"

namespace meshcomm::layers {

ParameterLayout embedding_layout(const ModelConfig& config, int tp, int tp_rank) {
  ParameterLayout layout(tp, tp_rank);
  layout.add("embedding", config.vocab, config.width, TensorSplit::replicated, 1.0F, false);
  return layout;
}

ParameterLayout output_layout(const ModelConfig& config, int tp, int tp_rank) {
  ParameterLayout layout(tp, tp_rank);
  layout.add("final_norm", 1, config.width, TensorSplit::replicated, 0, false);
  layout.add("output", config.vocab, config.width, TensorSplit::replicated,
             1.0F / std::sqrt(static_cast<float>(config.width)), true);
  return layout;
}

float output_loss_and_backward(const ModelConfig& config, const ParameterLayout& layout, const float* parameters,
                               const float* x, const std::int32_t* targets, std::size_t rows, float loss_scale,
                               float* d_x, float* d_parameters) {
  const std::size_t width = config.width;
  const auto& norm = layout.slots()[0];
  const auto& output = layout.slots()[1];
  std::vector<float> normed(rows * width), inverse_rms(rows);
  rms_norm_forward(x, parameters + norm.offset, normed.data(), inverse_rms.data(), rows, width, config.norm_eps);
  const LinearShape projection{.rows = rows, .in = width, .out = config.vocab};
  std::vector<float> logits(rows * config.vocab), d_logits(rows * config.vocab);
  linear_forward(normed.data(), parameters + output.offset, logits.data(), projection);
  const float loss = cross_entropy(logits.data(), targets, d_logits.data(), rows, config.vocab, loss_scale);
  std::vector<float> d_normed(rows * width);
  linear_backward(normed.data(), parameters + output.offset, d_logits.data(), d_normed.data(),
                  d_parameters + output.offset, projection);
  rms_norm_backward(x, parameters + norm.offset, inverse_rms.data(), d_normed.data(), d_x,
                    d_parameters + norm.offset, rows, width);
  return loss;
}

}  // namespace meshcomm::layers
