#pragma once

#include <cstddef>

namespace meshcomm::layers {

/// RMSNorm over rows of `width`: y = x / rms(x) · weight, rms(x) = √(mean(x²) + eps).
/// Keeps 1/rms per row in `inverse_rms` for the backward pass.
template <class T>
void rms_norm_forward(const T* x, const T* weight, T* y, T* inverse_rms, std::size_t rows, std::size_t width,
                      T eps);

/// Writes `d_x` and adds to `d_weight`, given `d_y` and the forward's `inverse_rms`.
template <class T>
void rms_norm_backward(const T* x, const T* weight, const T* inverse_rms, const T* d_y, T* d_x, T* d_weight,
                       std::size_t rows, std::size_t width);

}  // namespace meshcomm::layers
