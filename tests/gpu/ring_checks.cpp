#include "ring_checks.hpp"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "meshcomm/cuda_interop.hpp"

namespace meshcomm::testing {

namespace {

void expect_cuda(cudaError_t status) { ASSERT_EQ(status, cudaSuccess) << cudaGetErrorString(status); }

/// Element i of rank r's block.
std::int32_t block_value(int rank, std::size_t i) { return rank * 1'000'003 + static_cast<std::int32_t>(i); }

}  // namespace

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

}  // namespace meshcomm::testing
