#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "device_staging.hpp"

namespace meshcomm::verifiable {

namespace {
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
}  // namespace

std::string cuda_unavailable_reason() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device is visible (") + cudaGetErrorString(status) + ")";
  }
  return devices > 0 ? std::string() : "no CUDA device is visible";
}

std::shared_ptr<std::byte> device_bytes(std::size_t bytes) {
  void* pointer = nullptr;
  check(cudaMalloc(&pointer, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return {static_cast<std::byte*>(pointer), [](std::byte* p) { (void)cudaFree(p); }};
}

void copy_to_device(void* device, const void* host, std::size_t bytes) {
  check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void copy_to_host(void* host, const void* device, std::size_t bytes) {
  check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

std::shared_ptr<void> new_stream() {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  return {stream, [](void* s) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(s)); }};
}

void synchronize_stream(void* stream) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

double stream_milliseconds(void* stream, const std::function<void()>& timed) {
  cudaEvent_t events[2] = {nullptr, nullptr};
  for (auto& event : events) check(cudaEventCreate(&event), "cudaEventCreate");
  const auto queue = static_cast<cudaStream_t>(stream);
  check(cudaEventRecord(events[0], queue), "cudaEventRecord");
  timed();
  check(cudaEventRecord(events[1], queue), "cudaEventRecord");
  check(cudaEventSynchronize(events[1]), "cudaEventSynchronize");
  float milliseconds = 0;
  check(cudaEventElapsedTime(&milliseconds, events[0], events[1]), "cudaEventElapsedTime");
  for (auto event : events) (void)cudaEventDestroy(event);
  return milliseconds;
}

}  // namespace meshcomm::verifiable
