// RingAttention on the GPU (DeviceRingAttention): inproc ranks sharing the one GPU (world sizes
// 1-4), both device transfer paths, contiguous and zigzag, causal and not. Forward and backward
// equal single-rank attention (double precision) within 1e-5 of the largest reference value,
// as the host ring does.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "device/device_ring_attention.hpp"
#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"
#include "ring_attention_checks.hpp"

namespace meshcomm::testing {
namespace {

using Layout = layers::SequenceLayout;

class DeviceRingAttentionMatrix : public GpuTestWithParam<std::tuple<RingTransfer, int>> {};

TEST_P(DeviceRingAttentionMatrix, MatchesSingleRankAttention) {
  const auto [transfer, size] = GetParam();
  for (const auto layout : {Layout::contiguous, Layout::zigzag}) {
    for (const bool causal : {false, true}) {
      run_ranks(size, [&, transfer = transfer](Communicator& comm) {
        const double error = check_ring_attention(comm, layout, causal, device_ring_attention(transfer));
        if (comm.rank() == 0) {
          std::printf("device ring attention %s %s%s P=%d: largest relative error %.2e\n",
                      std::string(to_string(transfer)).c_str(), std::string(to_string(layout)).c_str(),
                      causal ? " causal" : "", comm.size(), error);
        }
      });
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, DeviceRingAttentionMatrix,
                         ::testing::Combine(::testing::Values(RingTransfer::sm_copy, RingTransfer::copy_engine),
                                            ::testing::Values(1, 2, 3, 4)),
                         KindAndWorldName());

TEST(DeviceRingAttention, LargerBlocksMatch) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_ranks(2, [](Communicator& comm) {
    (void)check_ring_attention(comm, Layout::zigzag, true, device_ring_attention(RingTransfer::copy_engine), 1e-5,
                               /*sequence_per_rank=*/256, /*heads=*/4, /*head_dim=*/64);
  });
}

// 256 rows a rank, scores bounded to 16 KiB a tile: 4 heads x 256 keys x 4 B = 4 KiB a query
// row, so each block is attended in tiles of 4 query rows, forward and backward.
TEST(DeviceRingAttention, TiledScoresMatch) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  for (const bool causal : {false, true}) {
    run_ranks(3, [causal](Communicator& comm) {
      (void)check_ring_attention(comm, Layout::zigzag, causal,
                                 device_ring_attention(RingTransfer::copy_engine, 16 << 10), 1e-5,
                                 /*sequence_per_rank=*/256, /*heads=*/4, /*head_dim=*/32);
    });
  }
}

TEST(DeviceRingAttention, UnequalShardsAreRefused) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_ranks(2, [](Communicator& comm) {
    const std::vector<std::int64_t> positions(comm.rank() == 0 ? 4 : 3, 0);
    try {
      layers::DeviceRingAttention ring(comm, {.rows = positions.size(), .heads = 1, .head_dim = 4}, positions);
      ADD_FAILURE() << "unequal shards accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("equal shards"), std::string::npos) << error.what();
    }
  });
}

}  // namespace
}  // namespace meshcomm::testing
