// Device memory through the CUDA runtime: copies, synchronisation, allocation.

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "device_runtime.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail::device {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(ErrorCode::backend_failure,
              fmt::format("CUDA {} failed: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)),
              {.backend = "cuda", .operation = what});
}

bool built() noexcept { return true; }

bool visible() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" status for later calls
    return false;
  }
  return devices > 0;
}

std::string pointer_problem(const void* pointer) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return fmt::format("CUDA cannot inspect it: {}", cudaGetErrorString(status));
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) return {};
  return attributes.type == cudaMemoryTypeHost ? "it points to pinned host memory, not device memory"
                                               : "it points to host memory, not device memory";
}

void copy(void* to, const void* from, std::size_t bytes, StreamRef stream) {
  if (bytes == 0) return;
  const cudaStream_t queue = stream_or_per_thread(stream);
  check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, queue), "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(queue), "cudaStreamSynchronize after a copy");
}

void copy_2d(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t row_bytes,
             std::size_t rows, StreamRef stream) {
  if (row_bytes == 0 || rows == 0) return;
  check_cuda(cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, row_bytes, rows, cudaMemcpyDefault,
                               static_cast<cudaStream_t>(stream.native_handle())),
             "cudaMemcpy2DAsync");
}

void synchronize(StreamRef stream) {
  check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream.native_handle())), "cudaStreamSynchronize");
}

void* allocate(std::size_t bytes) {
  void* pointer = nullptr;
  check_cuda(cudaMalloc(&pointer, bytes), "cudaMalloc");
  return pointer;
}

void release(void* pointer) noexcept { (void)cudaFree(pointer); }

}  // namespace meshcomm::detail::device
