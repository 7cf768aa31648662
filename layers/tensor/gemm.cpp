#include "gemm.hpp"

#include <cblas.h>

#include <mutex>
#include <type_traits>

namespace meshcomm::layers {

namespace {

/// Ranks are threads or processes with a core each: OpenBLAS must not start a pool of its own.
void use_one_blas_thread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

CBLAS_TRANSPOSE to_cblas(Transpose transpose) { return transpose == Transpose::yes ? CblasTrans : CblasNoTrans; }

blasint as_blas(std::size_t value) { return static_cast<blasint>(value); }

}  // namespace

template <class T>
void gemm(Transpose transpose_a, Transpose transpose_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
          const T* a, const T* b, T beta, T* c) {
  if (m == 0 || n == 0) return;
  use_one_blas_thread();
  const auto lda = as_blas(transpose_a == Transpose::yes ? m : k);
  const auto ldb = as_blas(transpose_b == Transpose::yes ? k : n);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, to_cblas(transpose_a), to_cblas(transpose_b), as_blas(m), as_blas(n), as_blas(k),
                alpha, a, lda, b, ldb, beta, c, as_blas(n));
  } else {
    cblas_dgemm(CblasRowMajor, to_cblas(transpose_a), to_cblas(transpose_b), as_blas(m), as_blas(n), as_blas(k),
                alpha, a, lda, b, ldb, beta, c, as_blas(n));
  }
}

template void gemm<float>(Transpose, Transpose, std::size_t, std::size_t, std::size_t, float, const float*,
                          const float*, float, float*);
template void gemm<double>(Transpose, Transpose, std::size_t, std::size_t, std::size_t, double, const double*,
                           const double*, double, double*);

}  // namespace meshcomm::layers
