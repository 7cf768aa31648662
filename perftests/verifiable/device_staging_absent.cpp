#include <stdexcept>

#include "device_staging.hpp"

namespace meshcomm::verifiable {

std::string cuda_unavailable_reason() { return "this build has no CUDA support (MESHCOMM_WITH_CUDA=OFF)"; }

std::shared_ptr<std::byte> device_bytes(std::size_t) { throw std::runtime_error(cuda_unavailable_reason()); }
void copy_to_device(void*, const void*, std::size_t) { throw std::runtime_error(cuda_unavailable_reason()); }
void copy_to_host(void*, const void*, std::size_t) { throw std::runtime_error(cuda_unavailable_reason()); }

std::shared_ptr<void> new_stream() { throw std::runtime_error(cuda_unavailable_reason()); }
void synchronize_stream(void*) { throw std::runtime_error(cuda_unavailable_reason()); }
double stream_milliseconds(void*, const std::function<void()>&) { throw std::runtime_error(cuda_unavailable_reason()); }

}  // namespace meshcomm::verifiable
