#include "training/adamw.hpp"

#include <cmath>

namespace meshcomm::layers {

void adamw_step(const AdamWConfig& config, std::size_t step, float* parameters, const float* gradients, float* first,
                float* second, const float* decay_mask, std::size_t count) {
  const double t = static_cast<double>(step);
  const auto first_correction = static_cast<float>(1.0 - std::pow(static_cast<double>(config.beta1), t));
  const auto second_correction = static_cast<float>(1.0 - std::pow(static_cast<double>(config.beta2), t));
  for (std::size_t i = 0; i < count; ++i) {
    const float g = gradients[i];
    first[i] = config.beta1 * first[i] + (1.0F - config.beta1) * g;
    second[i] = config.beta2 * second[i] + (1.0F - config.beta2) * g * g;
    const float update = (first[i] / first_correction) / (std::sqrt(second[i] / second_correction) + config.eps);
    parameters[i] -= config.learning_rate * (update + config.weight_decay * decay_mask[i] * parameters[i]);
  }
}

}  // namespace meshcomm::layers
