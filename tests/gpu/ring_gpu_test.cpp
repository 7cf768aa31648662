// RingPipeline on CUDA memory: inproc ranks sharing the one GPU (world sizes 1-4) pass blocks
// around the ring by each transfer path, ordered by streams and events alone: the checks read
// each received block with a copy queued on the compute stream, never waiting on the host first.

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/ring_pipeline.hpp"
#include "ring_checks.hpp"

namespace meshcomm::testing {
namespace {

class InprocCudaRing : public GpuTestWithParam<std::tuple<RingTransfer, int>> {};

TEST_P(InprocCudaRing, BlocksTravelTheRing) {
  const auto [transfer, size] = GetParam();
  run_ranks(size, [transfer = transfer](Communicator& comm) {
    check_ring_round(comm, transfer, RingDirection::forward);
    check_ring_round(comm, transfer, RingDirection::backward);
  });
}

INSTANTIATE_TEST_SUITE_P(Matrix, InprocCudaRing,
                         ::testing::Combine(::testing::Values(RingTransfer::sm_copy, RingTransfer::copy_engine,
                                                              RingTransfer::messages),
                                            ::testing::Values(1, 2, 3, 4)),
                         KindAndWorldName());

TEST(InprocRing, DevicePathsNeedCudaMemory) {
  run_ranks(2, [](Communicator& comm) {
    try {
      (void)RingPipeline::create(comm, {.block_bytes = 64, .transfer = RingTransfer::sm_copy});
      ADD_FAILURE() << "sm_copy accepted host memory";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("transfer = sm_copy needs cuda memory"), std::string::npos)
          << error.what();
    }
  });
}

}  // namespace
}  // namespace meshcomm::testing
