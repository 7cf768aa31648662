// Tutorial 2: train a small transformer on a device mesh and watch the loss.
//
//   mpirun -np 1 build/examples/train_tiny --mesh-dim 1,1,1,1
//   mpirun -np 4 build/examples/train_tiny --mesh-dim 1,2,1,2          # same losses
//   mpirun -np 4 build/examples/train_tiny --mesh-dim 1,1,2,2 --attention sliding --window 32 --shard heads
//
// tp cuts the heads and the MLP, sp cuts the sequence (full attention on the ring, sliding
// windows by halo exchange or head all-to-all), dp × fsdp cut the batch, and every layer's
// parameters are FSDP-sharded over --fsdp-axes. The losses do not depend on the mesh: every
// run with the same seed and model prints the same curve (to float rounding).

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "meshcomm/topology.hpp"
#include "training/tiny_transformer.hpp"

namespace {

double mebibytes(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

void print_memory(const meshcomm::layers::MemoryReport& memory) {
  fmt::print(
      "memory per rank (MiB): parameter shards {:.3f}, gathered layers peak {:.3f}, gradient shards {:.3f}, "
      "whole-layer gradients peak {:.3f}, AdamW moments {:.3f}, activations peak {:.3f}; total peak {:.3f}\n",
      mebibytes(memory.parameter_shards), mebibytes(memory.gathered_parameters_peak),
      mebibytes(memory.gradient_shards), mebibytes(memory.whole_gradients_peak), mebibytes(memory.optimizer),
      mebibytes(memory.activations_peak), mebibytes(memory.peak_total()));
}

/// Whether every loss is within 1e-4 relative of the one at the same step in `path`'s "losses".
bool matches_expected(const std::string& path, const std::vector<float>& losses, bool report) {
  std::ifstream file(path);
  if (!file) throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument, "--expect: cannot read '" + path + "'");
  const auto expected = nlohmann::json::parse(file).at("losses").get<std::vector<double>>();
  bool same = expected.size() == losses.size();
  if (!same && report) fmt::print("expected {} losses in {}, got {}\n", expected.size(), path, losses.size());
  for (std::size_t step = 0; same && step < losses.size(); ++step) {
    const double difference = std::abs(static_cast<double>(losses[step]) - expected[step]);
    if (difference > 1e-4 * std::abs(expected[step])) {
      same = false;
      if (report) fmt::print("step {}: loss {:.6f} differs from {:.6f} in {}\n", step, losses[step], expected[step], path);
    }
  }
  if (same && report) fmt::print("losses match {} at every step (1e-4 relative)\n", path);
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CLI::App app{"Trains a small transformer on synthetic next-token data over a device mesh."};
  std::string mesh_dim = "1,-1,1,1";
  std::string attention = "full";
  std::string shard = "sequence";
  std::string full_kv = "ring";
  std::string fsdp_axes = "dp,fsdp";
  std::string json_path;
  std::size_t steps = 10;
  meshcomm::layers::ModelConfig config;
  app.add_option("--mesh-dim", mesh_dim, "mesh dims dp,fsdp,tp,sp (one may be -1)")->capture_default_str();
  app.add_option("--attention", attention, "full or sliding")->capture_default_str();
  app.add_option("--window", config.window, "sliding window: keys per query")->capture_default_str();
  app.add_option("--shard", shard, "attention over sp: sequence (ring or halo) or heads (all-to-all)")
      ->capture_default_str();
  app.add_option("--full-kv", full_kv, "full attention with --shard sequence: ring or all_gather")
      ->capture_default_str();
  app.add_option("--fsdp-axes", fsdp_axes, "axes the parameters are sharded over (dp,fsdp or fsdp,sp ...)")
      ->capture_default_str();
  app.add_option("--steps", steps, "training steps")->capture_default_str();
  app.add_option("--layers", config.layers, "transformer blocks")->capture_default_str();
  app.add_option("--width", config.width, "model width")->capture_default_str();
  app.add_option("--heads", config.heads, "attention heads")->capture_default_str();
  app.add_option("--hidden", config.hidden, "MLP width")->capture_default_str();
  app.add_option("--vocab", config.vocab, "vocabulary size")->capture_default_str();
  app.add_option("--seq", config.sequence, "sequence length")->capture_default_str();
  app.add_option("--batch", config.batch, "sequences per step (global)")->capture_default_str();
  app.add_option("--lr", config.optimizer.learning_rate, "AdamW learning rate")->capture_default_str();
  app.add_option("--seed", config.seed, "initialisation and data seed")->capture_default_str();
  app.add_option("--json", json_path, "write {\"mesh_dim\", ..., \"losses\"} to this file");
  std::string expect_path;
  app.add_option("--expect", expect_path,
                 "a --json file of another run: exit 3 unless every step's loss is within 1e-4 relative of it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return rank == 0 ? app.exit(error) : (error.get_exit_code() == 0 ? 0 : 2);
  }

  try {
    config.attention = meshcomm::layers::parse_attention_kind(attention);
    config.shard = meshcomm::layers::parse_attention_shard(shard);
    config.full_kv = meshcomm::layers::parse_full_attention_kv(full_kv);
    config.fsdp_axes.clear();
    for (auto axis : meshcomm::split_axis_list(fsdp_axes)) config.fsdp_axes.emplace_back(axis);

    meshcomm::MpiBootstrap bootstrap;
    auto world = meshcomm::Communicator::create(bootstrap);
    auto topology = std::make_shared<const meshcomm::Topology>(meshcomm::Topology::discover(world));
    auto mesh = meshcomm::Mesh::create(world, meshcomm::MeshSpec::parse(mesh_dim), {.topology = topology});
    meshcomm::layers::TinyTransformer model(mesh, config);
    if (world.rank() == 0) {
      fmt::print("train_tiny: mesh {} ({} ranks), {} layers, width {}, {} heads, sequence {}, batch {}, attention {}",
                 mesh.spec().to_string(), world.size(), config.layers, config.width, config.heads, config.sequence,
                 config.batch, attention);
      if (config.attention == meshcomm::layers::AttentionKind::sliding) fmt::print(" (window {})", config.window);
      fmt::print(" by {}, fsdp over {}\n", to_string(config.exchange()), fsdp_axes);
    }
    std::vector<float> losses;
    for (std::size_t step = 0; step < steps; ++step) {
      const auto report = model.train_step(step);
      losses.push_back(report.loss);
      if (world.rank() == 0) {
        fmt::print("step {:>4}  loss {:.6f}  ({:.1f} ms, {:.1f} KiB sent by rank 0)\n", step, report.loss,
                   1e3 * report.step_seconds, static_cast<double>(report.volume.total()) / 1024.0);
      }
    }
    if (world.rank() == 0) {
      print_memory(model.memory());
      if (!json_path.empty()) {
        const nlohmann::json record{{"mesh_dim", mesh_dim}, {"ranks", world.size()},
                                    {"attention", attention}, {"window", config.window},
                                    {"shard", shard}, {"exchange", to_string(config.exchange())},
                                    {"fsdp_axes", fsdp_axes}, {"losses", losses}};
        std::ofstream(json_path) << record.dump(2) << "\n";
      }
    }
    if (!expect_path.empty() && !matches_expected(expect_path, losses, world.rank() == 0)) return 3;
    world.barrier();
  } catch (const meshcomm::Error& error) {
    fmt::print(stderr, "rank {}: error: {}\n", rank, error.what());
    return 2;
  }
  return 0;
}
