#pragma once

// For the layers' device code: CUDA and cuBLAS status codes as meshcomm errors, and typed
// device allocations.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

namespace meshcomm::layers::device {

/// Throws Error(backend_failure) naming `what` and CUDA's message unless `status` is success.
void check(cudaError_t status, const char* what);

/// Throws Error(backend_failure) naming `what` and cuBLAS's status unless it is success.
void check(cublasStatus_t status, const char* what);

/// Device memory for `count` elements of T (at least one), freed with cudaFree.
template <class T>
T* allocate(std::size_t count, const char* what) {
  void* memory = nullptr;
  check(cudaMalloc(&memory, std::max<std::size_t>(count, 1) * sizeof(T)), what);
  return static_cast<T*>(memory);
}

}  // namespace meshcomm::layers::device
