// The loss curve of every mesh of the job's size equals the single-rank run's, over Open MPI.

#include <gtest/gtest.h>

#include <cstdio>

#include "cases/training_cases.hpp"
#include "harness/mpi_world.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm::testing {
namespace {

constexpr int kSteps = 4;

TEST(MpiTraining, EveryMeshOfThisSizeMatchesOneRank) {
  Communicator& world = mpi_world();
  // Each rank computes the single-rank reference on a communicator of its own.
  Communicator alone = world.split(world.rank(), 0);
  int meshes_run = 0;
  for (auto [attention, shard] : {std::pair{layers::AttentionKind::full, layers::AttentionShard::sequence},
                                  {layers::AttentionKind::sliding, layers::AttentionShard::sequence},
                                  {layers::AttentionKind::sliding, layers::AttentionShard::heads}}) {
    const auto config = small_model(attention, shard);
    const auto reference = train_losses(alone, "1,1,1,1", config, kSteps);
    for (const auto& mesh_dim : equivalence_meshes()) {
      if (world_size_of(mesh_dim) != world.size()) continue;
      const auto losses = train_losses(world, mesh_dim, config, kSteps);
      expect_same_losses(losses, reference, describe(config) + " on " + mesh_dim);
      ++meshes_run;
      if (world.rank() == 0) {
        std::printf("%s on %s: last loss %.6f (single rank %.6f)\n", describe(config).c_str(), mesh_dim.c_str(),
                    losses.back(), reference.back());
      }
    }
  }
  if (meshes_run == 0) GTEST_SKIP() << "no mesh of the list has " << world.size() << " ranks";
}

}  // namespace
}  // namespace meshcomm::testing
