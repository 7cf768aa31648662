#pragma once

#include <cstddef>

namespace meshcomm::layers {

/// y = x · σ(x), elementwise (the MLP's activation).
template <class T>
void silu_forward(const T* x, T* y, std::size_t count);

/// d_x = d_y · σ(x) (1 + x (1 − σ(x))).
template <class T>
void silu_backward(const T* x, const T* d_y, T* d_x, std::size_t count);

}  // namespace meshcomm::layers
