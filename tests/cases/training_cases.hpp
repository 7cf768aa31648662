#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "model/model_config.hpp"

namespace meshcomm::testing {

/// A small model for the equivalence tests: 2 layers, width 32, 4 heads, sequence 32, batch 2.
/// `attention` full → ring; sliding → halo (`shard` sequence) or head all-to-all (`shard` heads),
/// with a window (20) wider than a shard (16 rows at sp 2, 8 at sp 4: the halo then spans
/// three ranks).
layers::ModelConfig small_model(layers::AttentionKind attention, layers::AttentionShard shard);

/// A readable name for a config: "full/ring", "sliding/halo", ...
std::string describe(const layers::ModelConfig& config);

/// The meshes every config is checked on, as --mesh-dim strings: the seven of the layer plan
/// and (1,1,1,4), whose halos come from several ranks.
std::vector<std::string> equivalence_meshes();

/// The number of ranks a mesh of equivalence_meshes() takes (its sizes multiplied).
int world_size_of(std::string_view mesh_dim);

/// Trains `config` for `steps` steps on a mesh over `world`; the loss of every step.
std::vector<float> train_losses(Communicator& world, std::string_view mesh_dim, const layers::ModelConfig& config,
                                int steps);

/// Every step's loss within 1e-4 relative of the single-rank run's.
void expect_same_losses(const std::vector<float>& losses, const std::vector<float>& reference, std::string_view what);

}  // namespace meshcomm::testing
