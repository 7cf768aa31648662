// The collective matrix on CUDA memory: inproc ranks as threads of one process sharing the one
// GPU (world sizes 1-4), every algorithm moving device buffers with device copies and kernels.

#include <gtest/gtest.h>

#include <tuple>

#include "cases/collective_cases.hpp"
#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"

namespace meshcomm::testing {
namespace {

class InprocCudaCollectives : public GpuTestWithParam<std::tuple<CollectiveKind, int>> {};

TEST_P(InprocCudaCollectives, ExactResults) {
  const auto [kind, size] = GetParam();
  run_ranks(size, [kind = kind](Communicator& comm) { check_collective_matrix(comm, kind, MemoryKind::cuda); });
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, InprocCudaCollectives,
    ::testing::Combine(::testing::Values(CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                         CollectiveKind::all_reduce, CollectiveKind::all_to_all,
                                         CollectiveKind::all_to_allv, CollectiveKind::broadcast),
                       ::testing::Values(1, 2, 3, 4)),
                         KindAndWorldName());

}  // namespace
}  // namespace meshcomm::testing
