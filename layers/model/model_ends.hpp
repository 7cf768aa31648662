#pragma once

#include <cstddef>
#include <cstdint>

#include "model/model_config.hpp"
#include "model/parameter_layout.hpp"

namespace meshcomm::layers {

/// The token embedding [vocab, width], replicated over tp.
ParameterLayout embedding_layout(const ModelConfig& config, int tp, int tp_rank);

/// The final RMSNorm and the output projection [vocab, width], replicated over tp.
ParameterLayout output_layout(const ModelConfig& config, int tp, int tp_rank);

/// The output unit's forward and backward in one go: logits of `x` [rows, width], cross-entropy
/// against `targets` scaled by `loss_scale`; writes d_x and adds the parameter gradients.
/// Returns this rank's scaled loss sum.
float output_loss_and_backward(const ModelConfig& config, const ParameterLayout& layout, const float* parameters,
                               const float* x, const std::int32_t* targets, std::size_t rows, float loss_scale,
                               float* d_x, float* d_parameters);

}  // namespace meshcomm::layers
