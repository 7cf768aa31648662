// Halo exchange over the mpi backend, every strategy including MPI's neighbourhood collective.

#include <gtest/gtest.h>

#include "cases/halo_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiHalo, Contents) {
  for (auto strategy : halo_strategies(mpi_world())) check_halo_contents(mpi_world(), strategy);
}
TEST(MpiHalo, AdjointIsTranspose) {
  for (auto strategy : halo_strategies(mpi_world())) check_halo_adjoint(mpi_world(), strategy);
}
TEST(MpiHalo, GraphForm) {
  for (auto strategy : halo_strategies(mpi_world())) check_halo_graph(mpi_world(), strategy);
}
TEST(MpiHalo, SlidingWindowAttention) {
  for (auto strategy : halo_strategies(mpi_world())) check_sliding_window_attention(mpi_world(), strategy);
}
TEST(MpiHalo, Errors) { check_halo_errors(mpi_world()); }
TEST(MpiHeadTranspose, MovesEveryElement) { check_head_transpose(mpi_world()); }

}  // namespace
}  // namespace meshcomm::testing
