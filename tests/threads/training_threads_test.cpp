// The loss curve of every mesh equals the single-rank run's, ranks as threads (inproc backend).

#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>
#include <tuple>

#include "cases/training_cases.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm::testing {
namespace {

constexpr int kSteps = 4;

class InprocTraining
    : public ::testing::TestWithParam<std::tuple<layers::AttentionKind, layers::AttentionShard>> {};

TEST_P(InprocTraining, EveryMeshMatchesOneRank) {
  const auto [attention, shard] = GetParam();
  const auto config = small_model(attention, shard);
  std::vector<float> reference;
  run_ranks(1, [&](Communicator& world) { reference = train_losses(world, "1,1,1,1", config, kSteps); });
  std::printf("%s single rank: first loss %.6f, last %.6f\n", describe(config).c_str(), reference.front(),
              reference.back());
  EXPECT_LT(reference.back(), reference.front()) << "the loss must go down";
  for (const auto& mesh_dim : equivalence_meshes()) {
    std::mutex mutex;
    std::vector<std::vector<float>> per_rank;
    run_ranks(world_size_of(mesh_dim), [&](Communicator& world) {
      auto losses = train_losses(world, mesh_dim, config, kSteps);
      std::lock_guard lock(mutex);
      per_rank.push_back(std::move(losses));
    });
    for (const auto& losses : per_rank) expect_same_losses(losses, reference, describe(config) + " on " + mesh_dim);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Attention, InprocTraining,
    ::testing::Values(std::tuple{layers::AttentionKind::full, layers::AttentionShard::sequence},
                      std::tuple{layers::AttentionKind::sliding, layers::AttentionShard::sequence},
                      std::tuple{layers::AttentionKind::sliding, layers::AttentionShard::heads}),
    [](const auto& test) {
      return std::string(to_string(std::get<0>(test.param))) + "_" + std::string(to_string(std::get<1>(test.param)));
    });

}  // namespace
}  // namespace meshcomm::testing

namespace meshcomm::testing {
namespace {

TEST(InprocTraining, ShardingOverFsdpAndSpMatchesOneRank) {
  auto config = small_model(layers::AttentionKind::full, layers::AttentionShard::sequence);
  std::vector<float> reference;
  run_ranks(1, [&](Communicator& world) { reference = train_losses(world, "1,1,1,1", config, kSteps); });
  config.fsdp_axes = {"fsdp", "sp"};
  for (const std::string mesh_dim : {"1,2,1,2", "2,1,1,2", "1,1,1,4"}) {
    std::mutex mutex;
    std::vector<std::vector<float>> per_rank;
    run_ranks(4, [&](Communicator& world) {
      auto losses = train_losses(world, mesh_dim, config, kSteps);
      std::lock_guard lock(mutex);
      per_rank.push_back(std::move(losses));
    });
    for (const auto& losses : per_rank) expect_same_losses(losses, reference, "fsdp over fsdp,sp on " + mesh_dim);
  }
}

TEST(InprocTraining, InvalidConfigsNameTheField) {
  run_ranks(2, [](Communicator& world) {
    auto expect_error = [&](const layers::ModelConfig& config, const char* mesh_dim, const char* fragment) {
      try {
        (void)train_losses(world, mesh_dim, config, 1);
        ADD_FAILURE() << "no error for " << fragment;
      } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
      }
    };
    auto config = small_model(layers::AttentionKind::full, layers::AttentionShard::sequence);
    config.batch = 1;
    expect_error(config, "2,1,1,1", "batch 1 must be divisible by dp x fsdp 2");
    config = small_model(layers::AttentionKind::full, layers::AttentionShard::sequence);
    config.sequence = 30;
    expect_error(config, "1,1,1,2", "sequence 30 must be divisible by the zigzag layout's shares 4");
    config = small_model(layers::AttentionKind::sliding, layers::AttentionShard::heads);
    config.heads = 1;
    expect_error(config, "1,1,1,2", "heads per tp rank 1 must be divisible by sp (shard heads) 2");
    config = small_model(layers::AttentionKind::full, layers::AttentionShard::sequence);
    config.fsdp_axes = {"tp"};
    expect_error(config, "1,1,2,1", "fsdp axis 'tp' is not one of dp, fsdp, sp");
  });
}

}  // namespace
}  // namespace meshcomm::testing
