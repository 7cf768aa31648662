#pragma once

#include <cstddef>

namespace meshcomm::layers {

/// Whether a GEMM operand is read transposed.
enum class Transpose : bool { no = false, yes = true };

/// Row-major C[m, n] = alpha · op(A)[m, k] · op(B)[k, n] + beta · C, on OpenBLAS (single-threaded:
/// each rank owns one core). op(A) is A [m, k] or, transposed, A [k, m]; likewise B.
template <class T>
void gemm(Transpose transpose_a, Transpose transpose_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
          const T* a, const T* b, T beta, T* c);

}  // namespace meshcomm::layers
