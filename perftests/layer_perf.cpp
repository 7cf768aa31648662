// layer_perf: a stack of reference transformer layers, forward and backward, under each way of
// sharding attention over sp — for sliding windows halo exchange (shard_sequence) against the
// head all-to-all (shard_heads), for full attention the ring against all-gathering K and V.
//
//   mpirun -np 2 build/perftests/layer_perf
//   mpirun -np 4 --oversubscribe build/perftests/layer_perf --mesh-dim 1,1,2,2 --seq 1024 --plot layers.png
//
// Every case trains the same model (same seed) on the same mesh; the cases run side by side,
// in turn, repeat after repeat, so drift hits them alike. Per case: time per layer (the blocks'
// forward + backward of one step / layers: median over steps, max over ranks), the whole step,
// bytes each rank sends per layer for attention and per step in all (counted as a ring algorithm
// sends them), the halo's extra key rows (% of a rank's own rows; the halo carries K and V, so no
// projection is recomputed: that is all the redundancy it costs), the peak memory per rank (the
// model's own accounting of parameters, gradients, AdamW moments and activations), and the loss
// of the last step, which must agree between cases with the same attention.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/process_backend.hpp"
#include "engine/plot.hpp"
#include "engine/side_by_side.hpp"
#include "engine/statistics.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "meshcomm/topology.hpp"
#include "training/tiny_transformer.hpp"

namespace meshcomm::perf {
namespace {

struct LayerPerfOptions {
  std::string mesh_dim = "1,1,1,-1";
  std::string cases = "sliding/sequence,sliding/heads,full/ring,full/all_gather";
  TimingPlan timing{.iterations = 2, .warmup = 1, .repeats = 3};
  std::string json_path;
  std::string plot_path;
  std::string backend = "mpi";
};

/// One case: attention kind and how it is sharded.
struct LayerCase {
  std::string name;
  layers::ModelConfig config;
};

LayerCase parse_case(const std::string& name, const layers::ModelConfig& base) {
  const auto slash = name.find('/');
  if (slash == std::string::npos) {
    throw Error(ErrorCode::invalid_argument, "--cases: '" + name +
                                                 "' is not ATTENTION/HOW; valid: sliding/sequence, sliding/heads, "
                                                 "full/ring, full/all_gather, full/heads");
  }
  LayerCase layer_case{name, base};
  const std::string how = name.substr(slash + 1);
  layer_case.config.attention = layers::parse_attention_kind(name.substr(0, slash));
  if (how == "ring" || how == "all_gather") {
    layer_case.config.shard = layers::AttentionShard::sequence;
    layer_case.config.full_kv = layers::parse_full_attention_kv(how);
  } else {
    layer_case.config.shard = layers::parse_attention_shard(how);
  }
  return layer_case;
}

int run(int argc, char** argv, int world_rank) {
  LayerPerfOptions options;
  layers::ModelConfig base;
  base.layers = 16;
  base.sequence = 512;
  base.window = 64;
  base.batch = 1;
  CommandLine command_line{"Transformer layers forward + backward under each attention sharding over sp."};
  command_line.option("--mesh-dim", options.mesh_dim, "mesh dims dp,fsdp,tp,sp").show_default();
  command_line
      .option("--cases", options.cases,
              "comma-separated ATTENTION/HOW: sliding/sequence, sliding/heads, full/ring, full/all_gather, "
              "full/heads")
      .show_default();
  std::string fsdp_axes = "dp,fsdp";
  command_line.option("--fsdp-axes", fsdp_axes, "axes the layers' parameters are sharded over").show_default();
  bool no_prefetch = false;
  command_line.flag("--no-prefetch", no_prefetch, "gather each layer's parameters only when it is used");
  command_line.option("--layers", base.layers, "transformer layers").show_default();
  command_line.option("--width", base.width, "model width").show_default();
  command_line.option("--heads", base.heads, "attention heads").show_default();
  command_line.option("--hidden", base.hidden, "MLP width").show_default();
  command_line.option("--vocab", base.vocab, "vocabulary size").show_default();
  command_line.option("--seq", base.sequence, "sequence length").show_default();
  command_line.option("--window", base.window, "sliding window (keys per query)").show_default();
  command_line.option("--batch", base.batch, "sequences per step (global)").show_default();
  command_line.option("-n,--iters", options.timing.iterations, "timed steps per repeat").show_default();
  command_line.option("-w,--warmup", options.timing.warmup, "untimed steps first").show_default();
  command_line.option("--repeat", options.timing.repeats, "repeats (median kept)").show_default();
  command_line.option("--json", options.json_path, "write one record per case to this file");
  add_process_backend_option(command_line, options.backend);
  command_line.option("--plot", options.plot_path, "draw time per layer and bytes per layer by case (PNG or SVG)");
  if (auto exit_code = command_line.parse(argc, argv, world_rank == 0)) return *exit_code;

  base.prefetch = !no_prefetch;
  base.fsdp_axes.clear();
  for (auto axis : split_axis_list(fsdp_axes)) base.fsdp_axes.emplace_back(axis);

  MpiBootstrap bootstrap;
  auto world = Communicator::create(bootstrap, {.backend = process_backend(options.backend)});
  auto topology = std::make_shared<const Topology>(Topology::discover(world));
  auto mesh = Mesh::create(world, MeshSpec::parse(options.mesh_dim), {.topology = topology});

  std::vector<LayerCase> cases;
  for (auto name : split_axis_list(options.cases)) cases.push_back(parse_case(std::string(name), base));
  std::vector<std::unique_ptr<layers::TinyTransformer>> models;
  for (const auto& layer_case : cases) models.push_back(std::make_unique<layers::TinyTransformer>(mesh, layer_case.config));

  std::vector<std::vector<double>> block_seconds(cases.size()), gather_waits(cases.size());
  std::vector<layers::StepReport> last(cases.size());
  std::vector<std::uint64_t> steps(cases.size(), 0);
  std::vector<std::function<void()>> bodies;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    bodies.emplace_back([&, i] {
      last[i] = models[i]->train_step(steps[i]++);
      block_seconds[i].push_back(last[i].block_seconds);
      gather_waits[i].push_back(last[i].gather_wait_seconds);
    });
  }
  const auto step_seconds = time_side_by_side(world, options.timing, bodies);

  const int ranks = world.size();
  if (world.rank() == 0) {
    fmt::print("# layer_perf: mesh {} ({} ranks), {} layers, width {}, {} heads x {}, MLP {}, sequence {}, batch {}, "
               "window {}\n",
               mesh.spec().to_string(), ranks, base.layers, base.width, base.heads, base.width / base.heads,
               base.hidden, base.sequence, base.batch, base.window);
    fmt::print("# times: median over {} repeats x {} steps, max over ranks; bytes: sent per rank\n",
               options.timing.repeats, options.timing.iterations);
    fmt::print("# fsdp over {}{}; gather wait: time a step waited for parameter all-gathers issued one layer ahead\n",
               fsdp_axes, no_prefetch ? ", no prefetch" : "");
    fmt::print("{:>18} {:>16} {:>10} {:>9} {:>15} {:>10} {:>8} {:>9} {:>9} {:>10}\n", "case", "exchange", "layer(ms)",
               "step(ms)", "attn KiB/layer", "step KiB", "halo(%)", "gather wait(ms)", "peak MiB", "loss");
  }
  nlohmann::json records = nlohmann::json::array();
  std::vector<PlotSeries> series(2);
  series[0].title = "time per layer (ms)";
  series[1].title = "attention KiB per layer";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& config = cases[i].config;
    const double layer_ms =
        1e3 * reduce_over_ranks(world, median(block_seconds[i]), ReduceOp::max) / double(config.layers);
    const double step_ms = 1e3 * step_seconds[i];
    const double attention_kib =
        reduce_over_ranks(world, double(last[i].volume.attention), ReduceOp::max) / 1024.0 / double(config.layers);
    const double step_kib = reduce_over_ranks(world, double(last[i].volume.total()), ReduceOp::max) / 1024.0;
    const double halo = reduce_over_ranks(world, models[i]->halo_overhead_percent(), ReduceOp::max);
    const double peak_mib =
        reduce_over_ranks(world, double(models[i]->memory().peak_total()), ReduceOp::max) / 1048576.0;
    const double wait_ms = 1e3 * reduce_over_ranks(world, median(gather_waits[i]), ReduceOp::max);
    const double loss = last[i].loss;
    if (world.rank() != 0) continue;
    fmt::print("{:>18} {:>16} {:>10.3f} {:>9.1f} {:>15.1f} {:>10.1f} {:>8.1f} {:>15.2f} {:>9.2f} {:>10.6f}\n",
               cases[i].name, to_string(config.exchange()), layer_ms, step_ms, attention_kib, step_kib, halo, wait_ms,
               peak_mib, loss);
    records.push_back({{"case", cases[i].name}, {"attention", to_string(config.attention)},
                       {"exchange", to_string(config.exchange())}, {"mesh_dim", mesh.spec().to_string()},
                       {"ranks", ranks}, {"layers", config.layers}, {"width", config.width},
                       {"heads", config.heads}, {"hidden", config.hidden}, {"vocab", config.vocab}, {"seq", config.sequence},
                       {"batch", config.batch}, {"window", config.attention_window()},
                       {"time_per_layer_ms", layer_ms}, {"step_ms", step_ms},
                       {"attention_bytes_per_layer", attention_kib * 1024.0}, {"step_bytes", step_kib * 1024.0},
                       {"halo_extra_rows_pct", halo}, {"gather_wait_ms", wait_ms}, {"fsdp_axes", fsdp_axes}, {"prefetch", !no_prefetch}, {"peak_memory_bytes", peak_mib * 1048576.0},
                       {"loss", loss}});
    series[0].x.push_back(double(i + 1));
    series[0].y.push_back(layer_ms);
    series[1].x.push_back(double(i + 1));
    series[1].y.push_back(attention_kib);
  }
  if (world.rank() == 0) {
    if (!options.json_path.empty()) std::ofstream(options.json_path) << records.dump(2) << "\n";
    if (!options.plot_path.empty()) {
      std::string labels;
      for (std::size_t i = 0; i < cases.size(); ++i) labels += fmt::format("{}{}={}", i ? ", " : "", i + 1, cases[i].name);
      const auto problem = plot_lines(options.plot_path,
                                      {.title = fmt::format("layer_perf, {} ranks, mesh {}", ranks, mesh.spec().to_string()),
                                       .x_label = "case (" + labels + ")",
                                       .y_label = "ms per layer / KiB per layer",
                                       .log_x = false,
                                       .log_y = true},
                                      series);
      fmt::print("{}\n", problem.empty() ? "# plot: " + options.plot_path : "# plot not drawn: " + problem);
    }
  }
  world.barrier();
  return 0;
}

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    return meshcomm::perf::run(argc, argv, rank);
  } catch (const meshcomm::Error& error) {
    fmt::print(stderr, "rank {}: error: {}\n", rank, error.what());
    return 2;
  }
}
