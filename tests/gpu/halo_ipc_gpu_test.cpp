// Halo exchanges on CUDA memory between processes sharing one GPU: the mpi backend moves host
// memory only, so p2p plans on CUDA memory pack into outboxes that the receivers read through
// CUDA IPC. Run under mpirun -np 2 and 3.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cases/halo_cases.hpp"
#include "harness/gpu_skip.hpp"
#include "harness/mpi_world.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {
namespace {

TEST(IpcHalo, Contents) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_contents(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

TEST(IpcHalo, AdjointIsTranspose) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_adjoint(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

TEST(IpcHalo, GraphForm) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_graph(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

// Exchanges queued back to back on one stream, never waited on: each one's rows are read by a
// copy queued behind it, and the outboxes are reused safely from one to the next.
TEST(IpcHalo, StreamOrderedWithoutHostWaits) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  constexpr std::size_t own = 4;
  constexpr std::size_t columns = 2;
  const std::vector<std::size_t> rows(static_cast<std::size_t>(size), own);
  auto plan = HaloPlan::create(comm, {.shard_rows = rows, .left = 1, .right = 1, .row_elements = columns,
                                      .periodic = true, .memory = MemoryKind::cuda});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::size_t extended = plan.extended_rows() * columns;
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, extended * sizeof(float)), cudaSuccess);
  // Pinned host memory: copies to and from it do not make the host wait for the stream.
  constexpr int rounds = 5;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 2 * rounds * extended * sizeof(float)), cudaSuccess);
  auto* written = static_cast<float*>(pinned);             // [round][extended]
  auto* seen = written + rounds * extended;                 // [round][extended]
  auto value = [&](int round, std::size_t global_row, std::size_t column) {
    return static_cast<float>(round * 1000 + static_cast<int>(global_row * 10 + column));
  };
  for (int round = 0; round < rounds; ++round) {
    float* mine = written + round * extended;
    std::fill(mine, mine + extended, -1.0F);
    for (std::size_t r = 0; r < own; ++r) {
      for (std::size_t c = 0; c < columns; ++c) mine[(1 + r) * columns + c] = value(round, rank * own + r, c);
    }
    ASSERT_EQ(cudaMemcpyAsync(device, mine, extended * sizeof(float), cudaMemcpyHostToDevice, stream), cudaSuccess);
    (void)plan.start(device, stream_ref(stream));  // not waited on
    ASSERT_EQ(cudaMemcpyAsync(seen + round * extended, device, extended * sizeof(float), cudaMemcpyDeviceToHost,
                              stream),
              cudaSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::size_t total = own * static_cast<std::size_t>(size);
  for (int round = 0; round < rounds; ++round) {
    const std::size_t before = (rank * own + total - 1) % total;
    const std::size_t after = (rank * own + own) % total;
    for (std::size_t c = 0; c < columns; ++c) {
      EXPECT_EQ(seen[round * extended + c], value(round, before, c)) << "round " << round << " left halo, rank "
                                                                     << rank;
      EXPECT_EQ(seen[round * extended + (1 + own) * columns + c], value(round, after, c))
          << "round " << round << " right halo, rank " << rank;
    }
  }
  (void)cudaFreeHost(pinned);
  (void)cudaFree(device);
  (void)cudaStreamDestroy(stream);
}

TEST(IpcHalo, OtherStrategiesAreRefusedByName) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  const std::vector<std::size_t> rows(static_cast<std::size_t>(mpi_world().size()), 4);
  try {
    (void)HaloPlan::create(mpi_world(), {.shard_rows = rows, .left = 1, .right = 1, .row_elements = 2,
                                         .strategy = HaloStrategy::neighbor_alltoallv, .memory = MemoryKind::cuda});
    ADD_FAILURE() << "neighbor_alltoallv on cuda memory over mpi was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(error.what()).find("strategy neighbor_alltoallv on cuda memory"), std::string::npos)
        << error.what();
  }
  // The communicator is still usable.
  check_halo_contents(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

}  // namespace
}  // namespace meshcomm::testing
