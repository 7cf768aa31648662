// RingPipeline on CUDA memory: inproc ranks sharing the one GPU (world sizes 1-4) pass blocks
// around the ring by each transfer path, ordered by streams and events alone: the checks read
// each received block with a copy queued on the compute stream, never waiting on the host first.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::testing {
namespace {

void expect_cuda(cudaError_t status) { ASSERT_EQ(status, cudaSuccess) << cudaGetErrorString(status); }

/// Element i of rank r's block.
std::int32_t block_value(int rank, std::size_t i) { return rank * 1'000'003 + static_cast<std::int32_t>(i); }

void check_ring_round(Communicator& comm, RingTransfer transfer, RingDirection direction) {
  constexpr std::size_t count = (1 << 20) + 3;  // 4 MiB and a little: an odd size for the copy paths
  cudaStream_t stream = nullptr;
  expect_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    auto ring = RingPipeline::create(comm, {.block_bytes = count * sizeof(std::int32_t), .direction = direction,
                                            .memory = MemoryKind::cuda, .transfer = transfer});
    std::vector<std::int32_t> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = block_value(comm.rank(), i);
    expect_cuda(cudaMemcpyAsync(ring.current().data(), host.data(), count * sizeof(std::int32_t),
                                cudaMemcpyHostToDevice, stream));
    const int size = comm.size();
    std::vector<Work> transfers;
    for (int step = 0; step < size; ++step) {
      // After `step` steps this rank holds the block that started `step` ranks upstream.
      const int origin = direction == RingDirection::forward ? (comm.rank() - step + size) % size
                                                             : (comm.rank() + step) % size;
      std::vector<std::int32_t> seen(count, -1);
      expect_cuda(cudaMemcpyAsync(seen.data(), ring.current().data(), count * sizeof(std::int32_t),
                                  cudaMemcpyDeviceToHost, stream));
      if (step + 1 < size) {
        transfers.push_back(ring.start(stream_ref(stream)));
        ring.advance(stream_ref(stream));
      }
      expect_cuda(cudaStreamSynchronize(stream));
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < count; ++i) wrong += seen[i] != block_value(origin, i) ? 1 : 0;
      EXPECT_EQ(wrong, 0U) << to_string(transfer) << " step " << step << " rank " << comm.rank() << ": element 0 is "
                           << seen[0] << ", expected block of rank " << origin;
    }
    for (auto& work : transfers) work.wait();
  }
  expect_cuda(cudaStreamDestroy(stream));
}

class InprocCudaRing : public ::testing::TestWithParam<std::tuple<RingTransfer, int>> {};

TEST_P(InprocCudaRing, BlocksTravelTheRing) {
  MESHCOMM_SKIP_WITHOUT_GPU();
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
                         [](const auto& param_info) {
                           return std::string(to_string(std::get<0>(param_info.param))) + "_world" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

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
