// Halo exchanges on CUDA memory: inproc ranks as threads sharing the one GPU (world sizes 1-4),
// rows packed and unpacked by kernels, both strategies the inproc backend offers; and the
// head all-to-all (HeadTranspose) on CUDA memory.

#include <gtest/gtest.h>

#include <tuple>

#include "cases/halo_cases.hpp"
#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"

namespace meshcomm::testing {
namespace {

class InprocCudaHalo : public GpuTestWithParam<std::tuple<HaloStrategy, int>> {};

TEST_P(InprocCudaHalo, Contents) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_contents(comm, strategy, MemoryKind::cuda); });
}

TEST_P(InprocCudaHalo, Adjoint) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_adjoint(comm, strategy, MemoryKind::cuda); });
}

TEST_P(InprocCudaHalo, Graph) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_graph(comm, strategy, MemoryKind::cuda); });
}

TEST(InprocCudaHeadTranspose, MovesEveryElement) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  for (const int size : {1, 2, 3, 4}) {
    run_ranks(size, [](Communicator& comm) { check_head_transpose(comm, MemoryKind::cuda); });
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, InprocCudaHalo,
                         ::testing::Combine(::testing::Values(HaloStrategy::p2p, HaloStrategy::neighbor_alltoallv),
                                            ::testing::Values(1, 2, 3, 4)),
                         KindAndWorldName());

}  // namespace
}  // namespace meshcomm::testing
