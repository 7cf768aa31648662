// DeviceRingAttention in a build without CUDA: it cannot be created.

#include "device_ring_attention.hpp"

#include "meshcomm/error.hpp"

namespace meshcomm::layers {

struct DeviceRingAttention::State {};

DeviceRingAttention::DeviceRingAttention(Communicator& /*ring*/, const RingAttentionShape& /*shape*/,
                                         std::span<const std::int64_t> /*positions*/,
                                         const DeviceRingOptions& /*options*/) {
  throw Error(ErrorCode::unsupported, "meshcomm was built without CUDA (MESHCOMM_WITH_CUDA=OFF)",
              {.operation = "DeviceRingAttention"});
}

DeviceRingAttention::~DeviceRingAttention() = default;

void DeviceRingAttention::forward(const float*, const float*, const float*, float*, float*) {}
void DeviceRingAttention::backward(const float*, const float*, const float*, const float*, const float*, const float*,
                                   float*, float*, float*) {}
void DeviceRingAttention::forward_compute_alone(const float*, const float*, const float*, float*, float*) {}
void DeviceRingAttention::forward_transfers_alone() {}
std::size_t DeviceRingAttention::block_bytes() const noexcept { return 0; }

}  // namespace meshcomm::layers
