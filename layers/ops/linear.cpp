#include "linear.hpp"

#include "tensor/gemm.hpp"

namespace meshcomm::layers {

template <class T>
void linear_forward(const T* x, const T* weight, T* y, const LinearShape& shape) {
  gemm<T>(Transpose::no, Transpose::yes, shape.rows, shape.out, shape.in, T(1), x, weight, T(0), y);
}

template <class T>
void linear_backward(const T* x, const T* weight, const T* d_y, T* d_x, T* d_weight, const LinearShape& shape,
                     bool accumulate_d_x) {
  gemm<T>(Transpose::no, Transpose::no, shape.rows, shape.in, shape.out, T(1), d_y, weight,
          accumulate_d_x ? T(1) : T(0), d_x);
  gemm<T>(Transpose::yes, Transpose::no, shape.out, shape.in, shape.rows, T(1), d_y, x, T(1), d_weight);
}

template void linear_forward<float>(const float*, const float*, float*, const LinearShape&);
template void linear_forward<double>(const double*, const double*, double*, const LinearShape&);
template void linear_backward<float>(const float*, const float*, const float*, float*, float*, const LinearShape&,
                                     bool);
template void linear_backward<double>(const double*, const double*, const double*, double*, double*,
                                      const LinearShape&, bool);

}  // namespace meshcomm::layers
