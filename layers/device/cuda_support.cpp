#include "cuda_support.hpp"

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::layers::device {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(ErrorCode::backend_failure, fmt::format("{} failed: {}", what, cudaGetErrorString(status)),
              {.backend = "cuda", .operation = what});
}

void check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorCode::backend_failure, fmt::format("{} failed: {}", what, cublasGetStatusString(status)),
              {.backend = "cublas", .operation = what});
}

}  // namespace meshcomm::layers::device
