// meshcomm-advise's inputs and fits: model text, mesh choices, alpha-beta and compute fits that
// recover the speeds they were made from, calibration files, and validation arithmetic.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "advice.hpp"
#include "calibration.hpp"
#include "harness/expect_error.hpp"
#include "machine_model.hpp"
#include "mesh_choice.hpp"
#include "model_shape.hpp"
#include "validation.hpp"

namespace meshcomm::testing {
namespace {

using namespace meshcomm::advisor;

TEST(AdvisorModel, PresetsAndOverrides) {
  const auto shape = parse_model("lwm-7b-128k,seq=262144,batch=16");
  EXPECT_EQ(shape.layers, 32U);
  EXPECT_EQ(shape.width, 4096U);
  EXPECT_EQ(shape.sequence, 262144U);
  EXPECT_EQ(shape.batch, 16U);
  EXPECT_EQ(shape.element_bytes, 2U);
  const auto custom = parse_model("layers=2,width=64,heads=8,kv-heads=2,hidden=128,vocab=0,seq=32,batch=2,dtype=f32");
  EXPECT_EQ(custom.kv_heads, 2U);
  EXPECT_EQ(custom.head_dim(), 8U);
  EXPECT_EQ(parse_model(to_string(custom)).hidden, 128U);
  for (const auto& preset : model_presets()) EXPECT_EQ(parse_model(preset.name).name, preset.name);
}

TEST(AdvisorModel, BadModelTextNamesWhatIsWrong) {
  EXPECT_NE(std::string(expect_error([] { (void)parse_model("gpt-9"); }).what()).find("lwm-7b-32k"), std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)parse_model("layers=x"); }).what()).find("layers=x"),
            std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)parse_model("width=100,heads=3"); }).what()).find("heads 3"),
            std::string::npos);
  EXPECT_NE(
      std::string(expect_error([] { (void)parse_model("heads=8,kv-heads=3,width=64"); }).what()).find("kv-heads 3"),
      std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)parse_model("depth=3"); }).what()).find("'depth'"), std::string::npos);
  ModelShape shape;
  EXPECT_NE(std::string(expect_error([&] { apply_attention(shape, "sliding:0"); }).what()).find("sliding:0"),
            std::string::npos);
  apply_attention(shape, "sliding:16");
  EXPECT_EQ(shape.window, 16U);
}

TEST(AdvisorChoices, EveryFactorisationIsFeasibleOrPrunedWithAReason) {
  const ModelShape shape =
      parse_model("layers=2,width=64,heads=4,kv-heads=4,hidden=128,vocab=16,seq=48,batch=6,dtype=f32");
  const auto set = enumerate_choices(12, shape, {});
  for (const auto& choice : set.feasible) {
    EXPECT_EQ(choice.world(), 12);
    EXPECT_TRUE(infeasibility(shape, choice).empty()) << choice.label();
    EXPECT_NE(choice.exchange, SequenceExchange::halo) << "full attention has no halo";
  }
  for (const auto& pruned : set.pruned) EXPECT_FALSE(pruned.reason.empty()) << pruned.choice.label();
  // A size-1 sp is one choice per (dp, fsdp, tp): never folded, one exchange.
  std::set<std::tuple<int, int, int>> seen;
  for (const auto& choice : set.feasible) {
    if (choice.sp != 1) continue;
    EXPECT_FALSE(choice.sp_in_shard) << choice.label();
    EXPECT_TRUE(seen.insert({choice.dp, choice.fsdp, choice.tp}).second) << choice.label();
  }
  // tp must divide heads 4 and dp·fsdp the batch 6: tp 2 with dp·fsdp 6 (4 ordered splits) and
  // tp 4 with dp·fsdp 3 (2 splits).
  EXPECT_EQ(seen.size(), 6U);
}

TEST(AdvisorChoices, ConstraintsPinAxesAndExchanges) {
  const ModelShape shape = parse_model("lwm-7b-32k");
  ChoiceConstraints constraints;
  add_fixed_axes(constraints, "tp=8,sp=4");
  constraints.exchanges = {SequenceExchange::ring};
  const auto set = enumerate_choices(1024, shape, constraints);
  ASSERT_FALSE(set.feasible.empty());
  for (const auto& choice : set.feasible) {
    EXPECT_EQ(choice.tp, 8);
    EXPECT_EQ(choice.sp, 4);
    EXPECT_EQ(choice.exchange, SequenceExchange::ring);
  }
  EXPECT_NE(std::string(expect_error([&] { add_fixed_axes(constraints, "pp=2"); }).what()).find("pp=2"),
            std::string::npos);
  EXPECT_NE(std::string(expect_error([&] { add_fixed_axes(constraints, "tp=0"); }).what()).find("'0'"),
            std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)parse_sequence_exchange("ulysses"); }).what()).find("ulysses"),
            std::string::npos);
}

TEST(AdvisorChoices, HeadAllToAllNeedsHeadsPerTpRankDivisibleBySp) {
  const ModelShape shape =
      parse_model("layers=1,width=64,heads=8,kv-heads=8,hidden=64,vocab=0,seq=64,batch=1,dtype=bf16");
  EXPECT_TRUE(infeasibility(shape, {.tp = 2, .sp = 4, .exchange = SequenceExchange::head_all_to_all}).empty());
  EXPECT_NE(infeasibility(shape, {.tp = 4, .sp = 4, .exchange = SequenceExchange::head_all_to_all})
                .find("heads per tp rank 2"),
            std::string::npos);
}

TEST(AdvisorFits, SegmentsPassThroughEveryMeasuredSizeAndKeepItsLine) {
  // Below 64 KiB: 5 µs + 1 µs/KiB; above 1 MiB: 40 µs + 0.1 µs/KiB; between: 20 µs + 0.5 µs/KiB.
  auto truth = [](double bytes) {
    const double kib = bytes / 1024;
    return bytes <= 65536 ? 5 + kib : bytes <= 1048576 ? 20 + 0.5 * kib : 40 + 0.1 * kib;
  };
  std::vector<CollectivePoint> points;
  for (double bytes = 1024; bytes <= 64.0 * 1048576; bytes *= 2) points.push_back({bytes, truth(bytes)});
  const auto fit = fit_collective(CollectiveOp::all_gather, "auto", 4, points);
  ASSERT_EQ(fit.segments.size(), points.size() - 1);
  for (const auto& point : points) EXPECT_NEAR(fit.time_us(point.bytes), point.time_us, 1e-9 * point.time_us);
  EXPECT_LT(fit.median_error_pct, 1e-9);
  // Inside one regime the line is the regime's; beyond the largest size the last line goes on.
  EXPECT_NEAR(fit.time_us(3 * 1048576.0), truth(3 * 1048576.0), 1e-9 * truth(3 * 1048576.0));
  EXPECT_NEAR(fit.segments.back().alpha_us, 40, 1e-6);
  EXPECT_NEAR(fit.time_us(256.0 * 1048576), truth(256.0 * 1048576), 1e-6 * truth(256.0 * 1048576));
  EXPECT_DOUBLE_EQ(fit.time_us(10), truth(1024));  // nothing is cheaper than the smallest measured call
}

TEST(AdvisorFits, RepeatedSizesCountAtTheirMedianAndOneSizeIsAConstant) {
  const auto fit = fit_collective(CollectiveOp::sendrecv, "auto", 2,
                                  {{1024, 10}, {1024, 30}, {1024, 11}, {4096, 40}, {4096, 20}, {4096, 21}});
  ASSERT_EQ(fit.segments.size(), 1U);
  EXPECT_NEAR(fit.time_us(1024), 11, 1e-9);
  EXPECT_NEAR(fit.time_us(4096), 21, 1e-9);
  const auto single = fit_collective(CollectiveOp::sendrecv, "auto", 2, {{1024, 7}});
  EXPECT_DOUBLE_EQ(single.time_us(1), 7);
  EXPECT_DOUBLE_EQ(single.time_us(1024), 7);
}

/// A machine whose six compute speeds all matter on the shapes the tests use.
ComputeSpeed known_compute() {
  return {.gemm_flops_per_s = 5e10,
          .attention_flops_per_s = 5e9,
          .seconds_per_pair = 4e-9,
          .seconds_per_scan = 2e-9,
          .activations_per_s = 2e8,
          .optimizer_bytes_per_s = 3e9};
}

TEST(AdvisorFits, ComputeSpeedsComeBackFromTheirOwnTimes) {
  const ComputeSpeed truth = known_compute();
  std::vector<ComputePoint> points;
  const ComputeWork base{.gemm_flops = 2e9,
                         .attention_flops = 2e7,
                         .attention_pairs = 2e6,
                         .attention_scans = 4e6,
                         .activations = 1e6,
                         .optimizer_bytes = 1e7};
  for (double scale : {1.0, 2.0, 3.0}) {
    // Each family grows one term of the base.
    for (double ComputeWork::*term : {&ComputeWork::gemm_flops, &ComputeWork::attention_flops,
                                      &ComputeWork::attention_pairs, &ComputeWork::attention_scans,
                                      &ComputeWork::activations, &ComputeWork::optimizer_bytes}) {
      ComputeWork work = base;
      work.*term *= scale;
      points.push_back({work, compute_seconds(truth, work)});
    }
  }
  double error = -1;
  const auto fitted = fit_compute(points, ComputeSpeed{}, error);
  EXPECT_NEAR(fitted.gemm_flops_per_s, truth.gemm_flops_per_s, 1e-6 * truth.gemm_flops_per_s);
  EXPECT_NEAR(fitted.attention_flops_per_s, truth.attention_flops_per_s, 1e-6 * truth.attention_flops_per_s);
  EXPECT_NEAR(fitted.seconds_per_pair, truth.seconds_per_pair, 1e-6 * truth.seconds_per_pair);
  EXPECT_NEAR(fitted.seconds_per_scan, truth.seconds_per_scan, 1e-6 * truth.seconds_per_scan);
  EXPECT_NEAR(fitted.activations_per_s, truth.activations_per_s, 1e-6 * truth.activations_per_s);
  EXPECT_NEAR(fitted.optimizer_bytes_per_s, truth.optimizer_bytes_per_s, 1e-6 * truth.optimizer_bytes_per_s);
  EXPECT_LT(error, 1e-6);
}

std::string write_temporary(const std::string& name, const nlohmann::json& json) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << json.dump();
  return path;
}

TEST(AdvisorCalibration, PerftestRecordsBecomeFitsAndTheFileRoundTrips) {
  nlohmann::json records = nlohmann::json::array();
  for (double bytes = 1048576; bytes <= 16 * 1048576.0; bytes *= 2) {
    records.push_back({{"op", "all_gather"},
                       {"algo", "auto"},
                       {"ranks", 4},
                       {"bytes", bytes},
                       {"time_us", 50 + bytes / 1000.0},
                       {"in_place", false},
                       {"wrong", 0}});
    records.push_back({{"op", "all_gather"},
                       {"algo", "mpi_best"},
                       {"ranks", 4},
                       {"bytes", bytes},
                       {"time_us", 1.0},
                       {"in_place", false},
                       {"wrong", 0}});  // Open MPI's row: not ours
  }
  const auto path = write_temporary("advisor_perftest.json", records);
  CalibrationSummary summary;
  const auto machine = calibrate({path}, MachineModel{}, 2, summary);
  EXPECT_EQ(summary.collective_records, 5);
  ASSERT_NE(machine.fit_for(CollectiveOp::all_gather, 4), nullptr);
  EXPECT_NEAR(machine.fit_for(CollectiveOp::all_gather, 4)->time_us(8 * 1048576.0), 50 + 8 * 1048576.0 / 1000, 1e-6);
  EXPECT_NEAR(machine.intra.bandwidth_gbps, 0.75 * 1000 * 1e-3, 1e-9);  // (P−1)/P · 1000 bytes per µs
  EXPECT_EQ(machine.cores_per_node, 2);
  const std::string saved = ::testing::TempDir() + "advisor_calib.json";
  save_calibration(machine, saved);
  const auto loaded = load_calibration(saved);
  ASSERT_NE(loaded.fit_for(CollectiveOp::all_gather, 4), nullptr);
  EXPECT_DOUBLE_EQ(loaded.fit_for(CollectiveOp::all_gather, 4)->time_us(3e6),
                   machine.fit_for(CollectiveOp::all_gather, 4)->time_us(3e6));
  EXPECT_EQ(loaded.cores_per_node, 2);
  EXPECT_EQ(loaded.nics_per_node, machine.nics_per_node);
}

/// A layer_perf record of `shape` on `mesh_dim` whose step took `seconds`.
nlohmann::json layer_record(const ModelShape& shape, const char* mesh_dim, int ranks, SequenceExchange exchange,
                            double seconds) {
  return {
      {"case", "synthetic"},  {"ranks", ranks},         {"mesh_dim", mesh_dim},    {"exchange", to_string(exchange)},
      {"fsdp_axes", "fsdp"},  {"prefetch", true},       {"layers", shape.layers},  {"width", shape.width},
      {"heads", shape.heads}, {"hidden", shape.hidden}, {"vocab", shape.vocab},    {"seq", shape.sequence},
      {"batch", shape.batch}, {"window", shape.window}, {"step_ms", seconds * 1e3}};
}

TEST(AdvisorCalibration, LayerRecordsGiveComputeSpeedsNodeSharingAndExchangeCosts) {
  // Steps made by a known machine: compute speeds, GEMMs 1.25x slower beside a second rank, 3 ms
  // per layer lost to four ranks taking turns on two cores, and 40 µs per halo call beyond its
  // messages. The calibration must find each again.
  MachineModel truth;
  truth.compute = known_compute();
  truth.cores_per_node = 2;
  const auto& step_of = predict_on_one_node;
  nlohmann::json records = nlohmann::json::array();
  for (std::size_t width : {32, 64, 128}) {
    for (std::size_t window : {0, 8}) {
      for (std::size_t sequence : {32, 64}) {
        const ModelShape shape = parse_model(
            fmt::format("layers=2,width={},heads=4,kv-heads=4,hidden={},vocab=16,seq={},batch=4,dtype=f32,window={}",
                        width, 2 * width + 32, sequence, window));
        const MeshChoice one{.exchange = window == 0 ? SequenceExchange::ring : SequenceExchange::halo};
        records.push_back(layer_record(shape, "1,1,1,1", 1, one.exchange, step_of(shape, one, truth).step()));
      }
    }
  }
  const ModelShape shape =
      parse_model("layers=2,width=64,heads=4,kv-heads=4,hidden=128,vocab=16,seq=64,batch=4,dtype=f32,window=8");
  MachineModel shared = truth;
  shared.node_sharing[2] = 1.25;
  const MeshChoice fsdp{.fsdp = 2, .exchange = SequenceExchange::halo};
  records.push_back(layer_record(shape, "1,2,1,1", 2, fsdp.exchange, step_of(shape, fsdp, shared).step()));
  MachineModel turns = shared;
  turns.oversubscribed_layer_seconds[4] = 0.003;
  const MeshChoice four{.fsdp = 4, .exchange = SequenceExchange::halo};
  records.push_back(layer_record(shape, "1,4,1,1", 4, four.exchange, step_of(shape, four, turns).step()));
  MachineModel calls = shared;
  calls.exchange_call_us["halo"] = 40;
  const MeshChoice sp{.sp = 2, .exchange = SequenceExchange::halo};
  records.push_back(layer_record(shape, "1,1,1,2", 2, sp.exchange, step_of(shape, sp, calls).step()));

  const auto path = write_temporary("advisor_layers.json", records);
  CalibrationSummary summary;
  const auto machine = calibrate({path}, MachineModel{}, 2, summary);
  EXPECT_EQ(summary.layer_records, 15);
  EXPECT_LT(summary.compute_median_error_pct, 1e-6);
  EXPECT_NEAR(machine.compute.gemm_flops_per_s, 5e10, 1e-6 * 5e10);
  EXPECT_NEAR(machine.compute.attention_flops_per_s, 5e9, 1e-6 * 5e9);
  EXPECT_NEAR(machine.compute.seconds_per_pair, 4e-9, 1e-6 * 4e-9);
  EXPECT_NEAR(machine.compute.seconds_per_scan, 2e-9, 1e-6 * 2e-9);
  EXPECT_NEAR(machine.compute.activations_per_s, 2e8, 1e-6 * 2e8);
  EXPECT_NEAR(machine.compute.optimizer_bytes_per_s, 3e9, 1e-6 * 3e9);
  ASSERT_EQ(machine.node_sharing.count(2), 1U);
  EXPECT_NEAR(machine.node_sharing.at(2), 1.25, 1e-6);
  ASSERT_EQ(machine.exchange_call_us.count("halo"), 1U);
  EXPECT_NEAR(machine.exchange_call_us.at("halo"), 40, 1e-6);
  // Beyond the cores, the GEMMs take turns on top of the sharing measured at the cores, and the
  // step loses what the turns cost per layer.
  EXPECT_NEAR(machine.compute_slowdown(4), 1.25 * 2, 1e-9);
  ASSERT_EQ(machine.oversubscribed_layer_seconds.count(4), 1U);
  EXPECT_NEAR(machine.oversubscribed_layer_seconds.at(4), 0.003, 1e-9);
  EXPECT_NEAR(machine.core_turns(3), 1.5, 1e-12);
}

TEST(AdvisorCalibration, FilesWithoutRecordsAreNamed) {
  const auto path = write_temporary("advisor_empty.json", nlohmann::json::array({{{"something", 1}}}));
  CalibrationSummary summary;
  EXPECT_NE(std::string(expect_error([&] { (void)calibrate({path}, MachineModel{}, 1, summary); }).what()).find(path),
            std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)load_calibration("/nonexistent/calib.json"); }).what())
                .find("/nonexistent/calib.json"),
            std::string::npos);
  EXPECT_NE(std::string(expect_error([] { (void)parse_link_speed("--inter", "25"); }).what()).find("--inter"),
            std::string::npos);
}

TEST(AdvisorValidation, ErrorsAndPicksAreMeasuredAgainstTheMeasurement) {
  const std::vector<ValidationRow> rows{{"a", "s", 1.0, 1.1}, {"b", "s", 2.0, 1.0}, {"c", "t", 1.0, 0.9}};
  const auto errors = summarize_errors(rows);
  EXPECT_NEAR(errors.median_pct, 10, 1e-9);
  EXPECT_NEAR(errors.worst_pct, 50, 1e-9);
  const auto picks = best_picks(rows);
  ASSERT_EQ(picks.size(), 2U);
  EXPECT_EQ(picks[0].predicted_best, "b");  // predicted 1.0, measured 2.0: twice the measured best
  EXPECT_EQ(picks[0].measured_best, "a");
  EXPECT_NEAR(picks[0].loss_pct, 100, 1e-9);
  EXPECT_NEAR(picks[1].loss_pct, 0, 1e-9);
}

}  // namespace
}  // namespace meshcomm::testing
