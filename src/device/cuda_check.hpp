#pragma once

// Shared by the CUDA parts of meshcomm: turning CUDA status codes into meshcomm errors.

#include <cuda_runtime_api.h>

#include "meshcomm/stream.hpp"

namespace meshcomm::detail::device {

/// Throws Error(backend_failure) naming `what` and CUDA's message unless `status` is success.
void check_cuda(cudaError_t status, const char* what);

/// The stream meshcomm queues device work on: `stream`, or the calling thread's own stream.
inline cudaStream_t stream_or_per_thread(StreamRef stream) noexcept {
  return stream.native_handle() == nullptr ? cudaStreamPerThread : static_cast<cudaStream_t>(stream.native_handle());
}

}  // namespace meshcomm::detail::device
