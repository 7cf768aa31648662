// A build without CUDA has no device ring; RingPipeline refuses CUDA memory before getting here.

#include "ring_transport.hpp"

namespace meshcomm::detail {

std::unique_ptr<RingTransport> make_device_ring(CommunicatorImpl&, const RingPipelineSpec&, RingPeers, RingTransfer) {
  throw Error(ErrorCode::unsupported, "a ring on CUDA memory needs a build with CUDA (MESHCOMM_WITH_CUDA=ON)",
              {.operation = "RingPipeline::create"});
}

}  // namespace meshcomm::detail
