// Halo exchange and head transposes over the inproc backend at world sizes 1, 2, 3, 4 and 7.

#include <gtest/gtest.h>

#include <tuple>

#include "cases/halo_cases.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {
namespace {

class InprocHalo : public ::testing::TestWithParam<std::tuple<HaloStrategy, int>> {};

TEST_P(InprocHalo, Contents) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_contents(comm, strategy); });
}
TEST_P(InprocHalo, AdjointIsTranspose) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_adjoint(comm, strategy); });
}
TEST_P(InprocHalo, GraphForm) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_halo_graph(comm, strategy); });
}
TEST_P(InprocHalo, SlidingWindowAttention) {
  const auto [strategy, size] = GetParam();
  run_ranks(size, [strategy = strategy](Communicator& comm) { check_sliding_window_attention(comm, strategy); });
}

TEST(InprocHeadTranspose, MovesEveryElement) {
  for (const int size : {1, 2, 3, 4, 7}) run_ranks(size, [](Communicator& comm) { check_head_transpose(comm); });
}

INSTANTIATE_TEST_SUITE_P(Matrix, InprocHalo,
                         ::testing::Combine(::testing::Values(HaloStrategy::p2p, HaloStrategy::neighbor_alltoallv),
                                            ::testing::Values(1, 2, 3, 4, 7)),
                         [](const auto& param_info) {
                           return std::string(to_string(std::get<0>(param_info.param))) + "_world" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

TEST(InprocHalo, Errors) {
  for (int size : {1, 2, 3}) run_ranks(size, check_halo_errors);
}

TEST(InprocHalo, MpiNeighborNeedsMpi) {
  run_ranks(2, [](Communicator& comm) {
    EXPECT_THROW((void)HaloPlan::create(comm, {.shard_rows = {3, 3}, .left = 1, .strategy = HaloStrategy::mpi_neighbor}),
                 Error);
  });
}

}  // namespace
}  // namespace meshcomm::testing
