#pragma once

#include <cstddef>

#include "model/model_config.hpp"

namespace meshcomm::layers {

/// One AdamW step (decoupled weight decay, bias-corrected moments) on `count` elements: step
/// counts from 1; `decay_mask` is 1 where weight decay applies and 0 elsewhere.
void adamw_step(const AdamWConfig& config, std::size_t step, float* parameters, const float* gradients, float* first,
                float* second, const float* decay_mask, std::size_t count);

}  // namespace meshcomm::layers
