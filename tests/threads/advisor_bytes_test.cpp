// meshcomm-advise's byte and memory predictions equal what the reference layers count, exactly:
// every rank of every mesh and exchange trains one step (ranks as threads) and compares its own
// counted bytes per axis and its memory accounting with the advisor's prediction for its place.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "harness/thread_ranks.hpp"
#include "memory_model.hpp"
#include "mesh_choice.hpp"
#include "meshcomm/mesh.hpp"
#include "traffic_model.hpp"
#include "training/tiny_transformer.hpp"

namespace meshcomm::testing {
namespace {

using advisor::MeshChoice;
using advisor::ModelShape;
using advisor::SequenceExchange;

/// Odd sizes, so that FSDP pads every unit and the halo reaches past a neighbour at sp 4.
ModelShape small_shape(std::size_t window) {
  return advisor::parse_model(fmt::format(
      "layers=2,width=20,heads=4,kv-heads=4,hidden=36,vocab=13,seq=24,batch=24,dtype=f32,window={}", window));
}

/// The reference model's config for an advisor choice.
layers::ModelConfig config_for(const ModelShape& shape, const MeshChoice& choice) {
  layers::ModelConfig config;
  config.layers = shape.layers;
  config.width = shape.width;
  config.heads = shape.heads;
  config.hidden = shape.hidden;
  config.vocab = shape.vocab;
  config.sequence = shape.sequence;
  config.batch = shape.batch;
  config.attention = shape.sliding() ? layers::AttentionKind::sliding : layers::AttentionKind::full;
  config.window = shape.sliding() ? shape.window : 64;
  config.shard = choice.exchange == SequenceExchange::head_all_to_all ? layers::AttentionShard::heads
                                                                      : layers::AttentionShard::sequence;
  config.full_kv = choice.exchange == SequenceExchange::all_gather_kv ? layers::FullAttentionKv::all_gather
                                                                      : layers::FullAttentionKv::ring;
  config.fsdp_axes = choice.sp_in_shard ? std::vector<std::string>{"fsdp", "sp"} : std::vector<std::string>{"fsdp"};
  return config;
}

/// One step on every rank; each rank's counted bytes and memory must equal the prediction for it.
void expect_predictions_exact(const ModelShape& shape, const MeshChoice& choice) {
  std::mutex mutex;
  std::vector<std::string> mismatches;
  // Up to 256 ranks as threads on two cores, beside whatever else the test run has going: a rank
  // may wait far longer than kTestTimeout for a peer that is not scheduled (one eager all-gather
  // of 16 threads timed out at 20 s while a 16-thread test ran beside it), so the waits grow
  // with the threads.
  const auto timeout = kTestTimeout * std::max(1, choice.world() / 16);
  run_ranks(choice.world(), [&](Communicator& world) {
    auto mesh = Mesh::create(world, MeshSpec::parse(choice.mesh_text()));
    layers::TinyTransformer model(mesh, config_for(shape, choice));
    const auto counted = model.train_step(0).volume;
    const int sp_rank = mesh.comm({"sp"}).rank();
    const auto bytes = advisor::predict_step_bytes(shape, choice, sp_rank);
    const auto held = model.memory();
    const auto memory = advisor::predict_memory(shape, choice, sp_rank);
    const std::vector<std::tuple<const char*, std::size_t, std::size_t>> checks{
        {"tp bytes", counted.tensor_parallel, bytes.tensor_parallel},
        {"sp bytes", counted.attention, bytes.attention},
        {"fsdp gather bytes", counted.fsdp_gather, bytes.fsdp_gather},
        {"fsdp reduce bytes", counted.fsdp_reduce, bytes.fsdp_reduce},
        {"replica bytes", counted.replica_reduce, bytes.replica_reduce},
        {"parameter shards", held.parameter_shards, memory.parameter_shards},
        {"gathered parameters", held.gathered_parameters_peak, memory.gathered_parameters_peak},
        {"gradient shards", held.gradient_shards, memory.gradient_shards},
        {"whole gradients", held.whole_gradients_peak, memory.whole_gradients_peak},
        {"optimizer", held.optimizer, memory.optimizer},
        {"activations", held.activations_peak, memory.activations_peak}};
    for (const auto& [what, actual, predicted] : checks) {
      if (actual == predicted) continue;
      std::lock_guard lock(mutex);
      mismatches.push_back(choice.label() + " rank " + std::to_string(world.rank()) + " (sp rank " +
                           std::to_string(sp_rank) + "): " + what + " counted " + std::to_string(actual) +
                           ", predicted " + std::to_string(predicted));
    }
  }, timeout);
  for (const auto& mismatch : mismatches) ADD_FAILURE() << mismatch;
}

class AdvisorBytes : public ::testing::TestWithParam<int> {};

TEST_P(AdvisorBytes, EveryMeshAndExchangeCountsWhatItPredicts) {
  for (std::size_t window : {std::size_t{0}, std::size_t{11}}) {
    const ModelShape shape = small_shape(window);
    const auto choices = advisor::enumerate_choices(GetParam(), shape, {});
    ASSERT_FALSE(choices.feasible.empty());
    for (const auto& choice : choices.feasible) expect_predictions_exact(shape, choice);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, AdvisorBytes, ::testing::Values(1, 2, 3, 4, 8),
                         [](const auto& world) { return "world" + std::to_string(world.param); });

/// Large worlds of a tiny model: the arithmetic holds at 64 and 256 ranks too.
TEST(AdvisorBytesLargeWorlds, SixtyFourAndTwoHundredFiftySixThreads) {
  const ModelShape full =
      advisor::parse_model("layers=1,width=16,heads=4,kv-heads=4,hidden=16,vocab=7,seq=64,batch=64,dtype=f32");
  ModelShape sliding = full;
  sliding.window = 9;
  expect_predictions_exact(
      full, {.dp = 2, .fsdp = 2, .tp = 2, .sp = 8, .exchange = SequenceExchange::ring, .sp_in_shard = true});
  expect_predictions_exact(sliding, {.dp = 1, .fsdp = 4, .tp = 1, .sp = 16, .exchange = SequenceExchange::halo});
  expect_predictions_exact(full, {.dp = 4, .fsdp = 4, .tp = 4, .sp = 4, .exchange = SequenceExchange::all_gather_kv});
  expect_predictions_exact(
      sliding, {.dp = 2, .fsdp = 8, .tp = 1, .sp = 16, .exchange = SequenceExchange::halo, .sp_in_shard = true});
  expect_predictions_exact(full,
                           {.dp = 4, .fsdp = 16, .tp = 1, .sp = 4, .exchange = SequenceExchange::head_all_to_all});
}

}  // namespace
}  // namespace meshcomm::testing
