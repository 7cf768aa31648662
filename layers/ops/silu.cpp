#include "silu.hpp"

#include <cmath>

namespace meshcomm::layers {

namespace {

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <class T>
void silu_forward(const T* x, T* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = x[i] * sigmoid(x[i]);
}

template <class T>
void silu_backward(const T* x, const T* d_y, T* d_x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const T s = sigmoid(x[i]);
    d_x[i] = d_y[i] * s * (T(1) + x[i] * (T(1) - s));
  }
}

template void silu_forward<float>(const float*, float*, std::size_t);
template void silu_forward<double>(const double*, double*, std::size_t);
template void silu_backward<float>(const float*, const float*, float*, std::size_t);
template void silu_backward<double>(const double*, const double*, double*, std::size_t);

}  // namespace meshcomm::layers
