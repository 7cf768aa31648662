#pragma once

#include <cstddef>

namespace meshcomm::layers {

/// A bias-free linear map: y [rows, out] = x [rows, in] · Wᵀ with W [out, in] (PyTorch's layout).
struct LinearShape {
  std::size_t rows = 0;
  std::size_t in = 0;
  std::size_t out = 0;
};

/// y = x Wᵀ (overwrites y).
template <class T>
void linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape);

/// d_x = d_y W (overwritten, or added to with `accumulate_d_x`), d_W += d_yᵀ x.
template <class T>
void linear_backward(const T* x, const T* weight, const T* d_y, T* d_x, T* d_weight, const LinearShape& shape,
                     bool accumulate_d_x = false);

}  // namespace meshcomm::layers
