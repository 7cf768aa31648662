#include "cases/training_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "meshcomm/mesh.hpp"
#include "training/tiny_transformer.hpp"

namespace meshcomm::testing {

layers::ModelConfig small_model(layers::AttentionKind attention, layers::AttentionShard shard) {
  layers::ModelConfig config;
  config.layers = 2;
  config.width = 32;
  config.heads = 4;
  config.hidden = 64;
  config.vocab = 16;
  config.sequence = 32;
  config.batch = 2;
  config.attention = attention;
  config.window = 20;
  config.shard = shard;
  return config;
}

std::string describe(const layers::ModelConfig& config) {
  return std::string(to_string(config.attention)) + "/" + std::string(to_string(config.exchange()));
}

std::vector<std::string> equivalence_meshes() {
  return {"1,1,1,1", "1,2,1,1", "1,1,2,1", "1,1,1,2", "2,1,1,2", "1,2,2,1", "1,1,2,2", "1,1,1,4"};
}

int world_size_of(std::string_view mesh_dim) {
  const MeshSpec spec = MeshSpec::parse(mesh_dim);  // kept alive: the loop reads its axes
  int size = 1;
  for (const auto& axis : spec.axes()) size *= axis.size;
  return size;
}

std::vector<float> train_losses(Communicator& world, std::string_view mesh_dim, const layers::ModelConfig& config,
                                int steps) {
  auto mesh = Mesh::create(world, MeshSpec::parse(mesh_dim));
  layers::TinyTransformer model(mesh, config);
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) losses.push_back(model.train_step(static_cast<std::uint64_t>(step)).loss);
  return losses;
}

void expect_same_losses(const std::vector<float>& losses, const std::vector<float>& reference, std::string_view what) {
  ASSERT_EQ(losses.size(), reference.size()) << what;
  for (std::size_t step = 0; step < losses.size(); ++step) {
    const double tolerance = 1e-4 * std::abs(static_cast<double>(reference[step]));
    EXPECT_NEAR(losses[step], reference[step], tolerance) << what << ", step " << step;
  }
}

}  // namespace meshcomm::testing
