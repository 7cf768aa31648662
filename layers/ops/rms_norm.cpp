#include "rms_norm.hpp"

#include <cmath>

#include "gradient_mutation.hpp"

namespace meshcomm::layers {

template <class T>
void rms_norm_forward(const T* x, const T* weight, T* y, T* inverse_rms, std::size_t rows, std::size_t width,
                      T eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = x + r * width;
    T squares = 0;
    for (std::size_t i = 0; i < width; ++i) squares += row[i] * row[i];
    const T inverse = T(1) / std::sqrt(squares / static_cast<T>(width) + eps);
    inverse_rms[r] = inverse;
    for (std::size_t i = 0; i < width; ++i) y[r * width + i] = row[i] * inverse * weight[i];
  }
}

template <class T>
void rms_norm_backward(const T* x, const T* weight, const T* inverse_rms, const T* d_y, T* d_x, T* d_weight,
                       std::size_t rows, std::size_t width) {
  // Factors of one unless a test leaves a term out: multiplying by one is exact, so the
  // arithmetic is bit for bit the same as without them.
  const GradientMutation mutation = active_gradient_mutation();
  const T weight_gradient = mutation == GradientMutation::zero_norm_gradient ? T(0) : T(1);
  const T through_rms = mutation == GradientMutation::drop_norm_correction ? T(0) : T(1);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = x + r * width;
    const T* d_row = d_y + r * width;
    const T inverse = inverse_rms[r];
    // d x_i = inv · w_i dy_i − inv³ · x_i · mean_j(w_j dy_j x_j)
    T projection = 0;
    for (std::size_t i = 0; i < width; ++i) projection += weight[i] * d_row[i] * row[i];
    const T correction = through_rms * inverse * inverse * inverse * projection / static_cast<T>(width);
    for (std::size_t i = 0; i < width; ++i) {
      d_x[r * width + i] = inverse * weight[i] * d_row[i] - correction * row[i];
      d_weight[i] += weight_gradient * d_row[i] * row[i] * inverse;
    }
  }
}

template void rms_norm_forward<float>(const float*, const float*, float*, float*, std::size_t, std::size_t, float);
template void rms_norm_forward<double>(const double*, const double*, double*, double*, std::size_t, std::size_t,
                                       double);
template void rms_norm_backward<float>(const float*, const float*, const float*, const float*, float*, float*,
                                       std::size_t, std::size_t);
template void rms_norm_backward<double>(const double*, const double*, const double*, const double*, double*, double*,
                                        std::size_t, std::size_t);

}  // namespace meshcomm::layers
