// meshcomm-advise: which mesh (dp, fsdp, tp, sp) and which sp exchange, ranked by predicted step
// time and memory per rank, with why.
//
//   meshcomm-advise --world 1024 --ranks-per-node 8 --model lwm-7b-128k --top 5 --explain
//   meshcomm-advise --world 64 --ranks-per-node 8 --model anemoi-o96 --fix tp=1 --json advice.json --plot advice.png
//   meshcomm-advise calibrate all_gather.json reduce_scatter.json ... layer.json --output calib.json
//   meshcomm-advise --world 4 --model layers=2,width=128,seq=256,dtype=f32 --calibration calib.json

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "advice.hpp"
#include "calibration.hpp"
#include "engine/plot.hpp"
#include "meshcomm/error.hpp"
#include "topology_options.hpp"
#include "validation.hpp"

namespace meshcomm::advisor {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct AdviseOptions {
  TopologyOptions where;
  std::string model = "lwm-7b-32k";
  std::string attention;
  std::string intra, inter, calibration;
  double flops = 0;
  double memory_gib = 0;
  int nics = 0;
  std::vector<std::string> fixed;
  std::string exchanges;
  int top = 10;
  bool explain = false;
  bool list_presets = false;
  std::string json_path, plot_path;
};

struct CalibrateOptions {
  std::vector<std::string> inputs;
  std::string output = "calib.json";
  int cores = static_cast<int>(std::thread::hardware_concurrency());
};

MachineModel machine_from(const AdviseOptions& options) {
  MachineModel machine = options.calibration.empty() ? MachineModel{} : load_calibration(options.calibration);
  if (!options.intra.empty()) machine.intra = parse_link_speed("--intra", options.intra);
  if (!options.inter.empty()) machine.inter = parse_link_speed("--inter", options.inter);
  if (options.flops > 0) {
    machine.compute.gemm_flops_per_s = options.flops;
    machine.compute.attention_flops_per_s = options.flops / 2;
  }
  if (options.memory_gib > 0) machine.memory_bytes = options.memory_gib * kGiB;
  if (options.nics > 0) machine.nics_per_node = options.nics;
  return machine;
}

ChoiceConstraints constraints_from(const AdviseOptions& options) {
  ChoiceConstraints constraints;
  for (const auto& text : options.fixed) add_fixed_axes(constraints, text);
  for (auto name : split_axis_list(options.exchanges)) constraints.exchanges.push_back(parse_sequence_exchange(name));
  return constraints;
}

nlohmann::json to_json(const RankedChoice& ranked) {
  const auto& c = ranked.choice;
  const auto& t = ranked.time;
  const auto& m = ranked.memory;
  const auto& b = ranked.bytes;
  return {{"dp", c.dp},
          {"fsdp", c.fsdp},
          {"tp", c.tp},
          {"sp", c.sp},
          {"exchange", c.sp > 1 ? std::string(to_string(c.exchange)) : "none"},
          {"shard_axes", c.shard_axes()},
          {"step_s", t.step()},
          {"compute_s", t.compute},
          {"turn_taking_s", t.turn_taking},
          {"exposed_s", {{"tp", t.tensor_parallel}, {"sp", t.sequence}, {"fsdp", t.fsdp}, {"dp", t.replicas}}},
          {"transfer_s", {{"sp", t.sequence_transfer}, {"fsdp", t.fsdp_transfer}}},
          {"memory_bytes",
           {{"parameter_shards", m.parameter_shards},
            {"gathered_parameters_peak", m.gathered_parameters_peak},
            {"gradient_shards", m.gradient_shards},
            {"whole_gradients_peak", m.whole_gradients_peak},
            {"optimizer", m.optimizer},
            {"activations_peak", m.activations_peak},
            {"peak_total", m.peak_total()}}},
          {"bytes_per_step",
           {{"tp", b.tensor_parallel},
            {"sp", b.attention},
            {"fsdp_gather", b.fsdp_gather},
            {"fsdp_reduce", b.fsdp_reduce},
            {"dp", b.replica_reduce},
            {"total", b.total()}}},
          {"warnings", ranked.warnings}};
}

void print_table(const Advice& advice, std::size_t shown) {
  fmt::print("{:>4} {:>5} {:>5} {:>4} {:>5} {:>16} {:>8} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "rank",
             "dp", "fsdp", "tp", "sp", "exchange", "shard", "step(ms)", "compute", "tp", "sp", "fsdp", "dp", "mem(GiB)",
             "warnings");
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = advice.ranked[i];
    const auto& c = r.choice;
    fmt::print(
        "{:>4} {:>5} {:>5} {:>4} {:>5} {:>16} {:>8} {:>10.3f} {:>10.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.2f}  "
        "{}\n",
        i + 1, c.dp, c.fsdp, c.tp, c.sp, c.sp > 1 ? to_string(c.exchange) : "-", c.shard_axes(), 1e3 * r.time.step(),
        1e3 * (r.time.compute + r.time.turn_taking), 1e3 * r.time.tensor_parallel, 1e3 * r.time.sequence,
        1e3 * r.time.fsdp, 1e3 * r.time.replicas, static_cast<double>(r.memory.peak_total()) / kGiB,
        fmt::join(r.warnings, "; "));
  }
}

std::string draw(const Advice& advice, std::size_t shown, const std::string& path, const std::string& title) {
  perf::StackedBars bars{.part_titles = {"compute", "tp exposed", "sp exposed", "fsdp exposed", "dp exposed"}};
  bars.parts.resize(bars.part_titles.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = advice.ranked[i];
    bars.labels.push_back(fmt::format("{}. {}", i + 1, r.choice.label()));
    const std::array parts{r.time.compute + r.time.turn_taking, r.time.tensor_parallel, r.time.sequence, r.time.fsdp,
                           r.time.replicas};
    for (std::size_t k = 0; k < parts.size(); ++k) bars.parts[k].push_back(1e3 * parts[k]);
  }
  return perf::plot_stacked_bars(path, {.title = title, .x_label = "mesh", .y_label = "predicted ms per step"}, bars);
}

int advise_command(const AdviseOptions& options) {
  if (options.list_presets) {
    for (const auto& preset : model_presets()) {
      fmt::print("{:<12} {}\n             {}\n", preset.name, preset.description, to_string(preset.shape));
    }
    return 0;
  }
  if (!options.where.simulated()) {
    throw Error(ErrorCode::invalid_argument,
                "give --world N (and --ranks-per-node K) or --xml FILE: the cluster to plan for");
  }
  AdviceRequest request{.shape = parse_model(options.model),
                        .machine = machine_from(options),
                        .placement = Placement::parse(options.where.policy),
                        .constraints = constraints_from(options)};
  if (!options.attention.empty()) apply_attention(request.shape, options.attention);
  if (options.top < 1)
    throw Error(ErrorCode::invalid_argument, fmt::format("--top {} must be at least 1", options.top));
  const Topology topology = simulated_topology(options.where);
  const Advice advice = advise(request, topology);
  fmt::print("# meshcomm-advise: {} ranks on {} nodes of {}; placement {}; machine: {}\n", topology.world_size(),
             topology.node_count(), topology.max_ranks_per_node(), request.placement.to_string(),
             request.machine.source);
  fmt::print("# model {}: {}\n", request.shape.name, to_string(request.shape));
  fmt::print(
      "# times: predicted per step on the busiest rank (compute includes turns on shared cores); tp/sp/fsdp/dp: "
      "communication left exposed after overlap\n");
  fmt::print("# {} choices run, {} left out\n", advice.ranked.size(), advice.pruned.size());
  const std::size_t shown = std::min<std::size_t>(advice.ranked.size(), static_cast<std::size_t>(options.top));
  if (advice.ranked.empty()) {
    fmt::print("no mesh runs this model here; the first reasons:\n");
    for (std::size_t i = 0; i < advice.pruned.size() && i < 10; ++i) {
      fmt::print("  {}: {}\n", advice.pruned[i].choice.label(), advice.pruned[i].reason);
    }
  } else {
    print_table(advice, shown);
  }
  if (options.explain && advice.ranked.size() >= 2) fmt::print("\n{}", explain(advice.ranked[0], advice.ranked[1]));
  if (!options.json_path.empty()) {
    nlohmann::json ranked = nlohmann::json::array();
    for (std::size_t i = 0; i < shown; ++i) ranked.push_back(to_json(advice.ranked[i]));
    nlohmann::json pruned = nlohmann::json::array();
    for (const auto& p : advice.pruned) pruned.push_back({{"mesh", p.choice.label()}, {"reason", p.reason}});
    std::ofstream(options.json_path) << nlohmann::json{{"world", topology.world_size()},
                                                       {"ranks_per_node", topology.max_ranks_per_node()},
                                                       {"model", to_string(request.shape)},
                                                       {"machine", request.machine.source},
                                                       {"ranked", ranked},
                                                       {"pruned", pruned}}
                                            .dump(2)
                                     << "\n";
    fmt::print("# JSON: {}\n", options.json_path);
  }
  if (!options.plot_path.empty() && shown > 0) {
    const auto problem = draw(advice, shown, options.plot_path,
                              fmt::format("{} on {} ranks ({} per node)", request.shape.name, topology.world_size(),
                                          topology.max_ranks_per_node()));
    fmt::print("{}\n", problem.empty() ? "# plot: " + options.plot_path : "# plot not drawn: " + problem);
  }
  return advice.ranked.empty() ? 1 : 0;
}

int calibrate_command(const CalibrateOptions& options) {
  CalibrationSummary summary;
  const MachineModel machine = calibrate(options.inputs, MachineModel{}, options.cores, summary);
  save_calibration(machine, options.output);
  fmt::print("# calibrate: {} collective records, {} layer records -> {}\n", summary.collective_records,
             summary.layer_records, options.output);
  fmt::print("{:>16} {:>6} {:>12} {:>7} {:>10}  segments (bytes: alpha us + beta us/MiB)\n", "op", "ranks", "algo",
             "points", "median err");
  for (const auto& fit : machine.fits) {
    std::string segments;
    for (const auto& s : fit.segments) {
      segments += fmt::format(" [{:.0f}..{:.0f}: {:.2f} + {:.1f}]", s.min_bytes, s.max_bytes, s.alpha_us,
                              s.beta_us_per_byte * 1048576.0);
    }
    fmt::print("{:>16} {:>6} {:>12} {:>7} {:>9.1f}% {}\n", to_string(fit.op), fit.ranks, fit.algorithm, fit.points,
               fit.median_error_pct, segments);
  }
  const auto& c = machine.compute;
  // A speed the fit did not need (its term explained nothing the others did not) is shown as such.
  auto rate = [](double value, const char* unit) {
    return value >= 1e29 ? std::string("not seen in the data") : fmt::format("{:.3g} {}", value, unit);
  };
  fmt::print(
      "compute: gemm {}, attention {} and {:.3g} s per visible pair, {:.3g} s per visited pair, activations {}, "
      "optimizer {} (median error {:.1f}%); cores per node {}\n",
      rate(c.gemm_flops_per_s, "flop/s"), rate(c.attention_flops_per_s, "flop/s"), c.seconds_per_pair,
      c.seconds_per_scan, rate(c.activations_per_s, "/s"), rate(c.optimizer_bytes_per_s, "B/s"),
      summary.compute_median_error_pct, machine.cores_per_node);
  for (const auto& [ranks, factor] : machine.node_sharing) {
    fmt::print("{} ranks on a node: GEMMs and activations {:.3f}x slower than one rank alone\n", ranks, factor);
  }
  for (const auto& [ranks, seconds] : machine.oversubscribed_layer_seconds) {
    fmt::print("{} ranks on a node of {} cores: {:.3f} ms per layer lost to taking turns\n", ranks,
               machine.cores_per_node, 1e3 * seconds);
  }
  for (const auto& [exchange, cost] : machine.exchange_call_us) {
    fmt::print("{} calls: {:.1f} us each beyond their messages\n", exchange, cost);
  }
  for (const auto& note : summary.notes) fmt::print("note: {}\n", note);
  return 0;
}

struct ValidateOptions {
  std::vector<std::string> inputs;
  std::string calibration;
  double min_bytes = 1048576;
};

void print_rows(const char* title, const char* unit, double scale, const std::vector<ValidationRow>& rows) {
  if (rows.empty()) return;
  fmt::print("{:<72} {:>12} {:>12} {:>8}\n", title, fmt::format("measured{}", unit), fmt::format("predicted{}", unit),
             "error");
  for (const auto& row : rows) {
    fmt::print("{:<72} {:>12.4g} {:>12.4g} {:>7.1f}%\n", row.what, scale * row.measured, scale * row.predicted,
               row.error_pct());
  }
  const auto errors = summarize_errors(rows);
  fmt::print("{} cases: median |error| {:.1f}%, worst {:.1f}%\n\n", rows.size(), errors.median_pct, errors.worst_pct);
}

int validate_command(const ValidateOptions& options) {
  const MachineModel machine = options.calibration.empty() ? MachineModel{} : load_calibration(options.calibration);
  const Validation validation = validate(options.inputs, machine, options.min_bytes);
  fmt::print("# meshcomm-advise validate: predictions of {} against the measurements\n\n", machine.source);
  print_rows("collective (library's selection, one node)", "(us)", 1.0, validation.collectives);
  print_rows("step (layer_perf)", "(ms)", 1e3, validation.steps);
  const auto picks = best_picks(validation.steps);
  for (const auto& pick : picks) {
    fmt::print("scenario {}:\n  predicted best {}; measured best {}; the predicted best measures {:.1f}% slower\n",
               pick.scenario, pick.predicted_best, pick.measured_best, pick.loss_pct);
  }
  for (const auto& skipped : validation.skipped) fmt::print("skipped: {}\n", skipped);
  return 0;
}

int run(int argc, char** argv) {
  AdviseOptions options;
  CalibrateOptions calibrate_options;
  CLI::App app{
      "meshcomm-advise: rank dp, fsdp, tp, sp meshes and sp exchanges for a model on a cluster, by "
      "predicted step time and memory per rank"};
  add_topology_options(app, options.where);
  app.add_option(
         "--model", options.model,
         "a preset (--presets lists them), key=value pairs (layers, width, heads, kv-heads, hidden, vocab, seq, "
         "batch, dtype, window), or a preset then overrides")
      ->capture_default_str();
  app.add_flag("--presets", options.list_presets, "list the model presets and exit");
  app.add_option("--attention", options.attention, "full or sliding:W (default: the model's)");
  app.add_option("--intra", options.intra, "link inside a node: GB/s per rank,latency us (default 300,3)");
  app.add_option("--inter", options.inter, "link between nodes: GB/s per NIC,latency us (default 50,8)");
  app.add_option("--nics", options.nics, "NICs per node sharing the inter-node traffic (default 8)");
  app.add_option("--flops", options.flops, "GEMM flop/s per rank (attention at half; default 4e14)");
  app.add_option("--memory", options.memory_gib, "memory per rank in GiB (default 80)");
  app.add_option("--calibration", options.calibration, "speeds measured by 'meshcomm-advise calibrate'");
  app.add_option("--fix", options.fixed, "pin axis sizes, e.g. tp=8 or tp=8,sp=4; repeatable");
  app.add_option("--sp-exchange", options.exchanges, "exchanges to consider: ring,all_gather_kv,halo,head_all_to_all");
  app.add_option("--top", options.top, "rows to show")->capture_default_str();
  app.add_flag("--explain", options.explain, "say why the first beats the second");
  app.add_option("--json", options.json_path, "write the ranked choices and the pruned ones here");
  app.add_option("--plot", options.plot_path, "stacked bars of compute and exposed communication (PNG or SVG)");
  auto* calibrate_app =
      app.add_subcommand("calibrate", "fit alpha-beta and compute speeds to perftest and layer_perf JSON");
  calibrate_app->add_option("inputs", calibrate_options.inputs, "perftest --json files and layer_perf --json files")
      ->required();
  calibrate_app->add_option("--output", calibrate_options.output, "where to write the calibration")
      ->capture_default_str();
  calibrate_app->add_option("--cores", calibrate_options.cores, "cores per node ranks share (default: this machine's)")
      ->capture_default_str();
  ValidateOptions validate_options;
  auto* validate_app = app.add_subcommand("validate", "predict perftest and layer_perf records and show the errors");
  validate_app->add_option("inputs", validate_options.inputs, "perftest --json files and layer_perf --json files")
      ->required();
  validate_app->add_option("--calibration", validate_options.calibration, "the calibration to predict with");
  validate_app->add_option("--min-bytes", validate_options.min_bytes, "smallest collective size compared")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (calibrate_app->parsed()) return calibrate_command(calibrate_options);
    if (validate_app->parsed()) return validate_command(validate_options);
    return advise_command(options);
  } catch (const Error& error) {
    fmt::print(stderr, "meshcomm-advise: {}\n", error.what());
    return 2;
  }
}

}  // namespace
}  // namespace meshcomm::advisor

int main(int argc, char** argv) { return meshcomm::advisor::run(argc, argv); }
