#include "validation.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "advice.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm::advisor {

namespace {

nlohmann::json read_records(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::invalid_argument, fmt::format("validate: cannot read {}", path));
  try {
    auto json = nlohmann::json::parse(in);
    if (!json.is_array()) throw Error(ErrorCode::invalid_argument, fmt::format("validate: {} is not an array of records", path));
    return json;
  } catch (const nlohmann::json::exception& error) {
    throw Error(ErrorCode::invalid_argument, fmt::format("validate: {} is not JSON ({})", path, error.what()));
  }
}

int axis_size(const MeshSpec& spec, std::string_view name) {
  const auto position = spec.find(name);
  return position ? spec.axes()[*position].size : 1;
}

/// The prediction of one layer_perf record, or the reason it cannot be made.
std::string predict_layer_record(const nlohmann::json& record, const MachineModel& machine, ValidationRow& row) {
  const int ranks = record.at("ranks");
  const MeshSpec spec = MeshSpec::parse(record.at("mesh_dim").get<std::string>()).resolved(ranks);
  MeshChoice choice{.dp = axis_size(spec, "dp"), .fsdp = axis_size(spec, "fsdp"), .tp = axis_size(spec, "tp"),
                    .sp = axis_size(spec, "sp"), .exchange = parse_sequence_exchange(record.at("exchange").get<std::string>())};
  const auto shard_axes = split_axis_list(record.value("fsdp_axes", std::string("fsdp")));
  const auto names = [&](std::string_view axis) { return std::find(shard_axes.begin(), shard_axes.end(), axis) != shard_axes.end(); };
  if (names("dp") && choice.dp > 1) return "dp shards the parameters here; the advisor's dp replicates";
  if (!names("fsdp") && choice.fsdp > 1) return "fsdp does not shard the parameters here";
  if (!record.value("prefetch", true)) return "no prefetch: the advisor plans FSDP with prefetch";
  choice.sp_in_shard = names("sp");
  const ModelShape shape{.name = record.at("case"), .layers = record.at("layers"), .width = record.at("width"),
                         .heads = record.at("heads"), .kv_heads = record.at("heads"), .hidden = record.at("hidden"),
                         .vocab = record.value("vocab", std::size_t{64}), .sequence = record.at("seq"),
                         .batch = record.at("batch"), .element_bytes = 4, .window = record.at("window")};
  if (auto reason = infeasibility(shape, choice); !reason.empty()) return reason;
  const Topology topology = Topology::simulated(ranks, ranks);
  const MeshLinks links = mesh_links(choice, Placement{}, topology, machine.nics_per_node);
  row = {.what = fmt::format("{} {}", choice.label(), shape.name),
         .scenario = fmt::format("{} ranks, {}, {} attention", ranks, to_string(shape), shape.sliding() ? "sliding" : "full"),
         .measured = record.at("step_ms").get<double>() * 1e-3,
         .predicted = predict_step(shape, choice, machine, links).step()};
  return {};
}

}  // namespace

Validation validate(const std::vector<std::string>& paths, const MachineModel& machine, double min_bytes) {
  Validation validation;
  for (const auto& path : paths) {
    for (const auto& record : read_records(path)) {
      if (record.contains("case")) {
        ValidationRow row;
        if (auto reason = predict_layer_record(record, machine, row); !reason.empty()) {
          validation.skipped.push_back(fmt::format("{}: {} on {}: {}", path, record.value("case", ""),
                                                   record.value("mesh_dim", ""), reason));
          continue;
        }
        validation.steps.push_back(std::move(row));
      } else if (record.contains("op")) {
        const auto op = parse_collective_op(record.value("op", ""));
        const double bytes = record.value("bytes", 0.0);
        if (!op || record.value("algo", "") != "auto" || record.value("in_place", false) || bytes < min_bytes) continue;
        const int ranks = record.value("ranks", 0);
        const GroupLinks links{.ranks = ranks};
        validation.collectives.push_back({.what = fmt::format("{} x{} {:.0f} B", to_string(*op), ranks, bytes),
                                          .measured = record.value("time_us", 0.0),
                                          .predicted = collective_seconds(machine, *op, bytes, links) * 1e6});
      }
    }
  }
  return validation;
}

std::vector<ScenarioPick> best_picks(const std::vector<ValidationRow>& rows) {
  std::map<std::string, std::pair<const ValidationRow*, const ValidationRow*>> best;  // predicted, measured
  for (const auto& row : rows) {
    auto& [predicted, measured] = best[row.scenario];
    if (predicted == nullptr || row.predicted < predicted->predicted) predicted = &row;
    if (measured == nullptr || row.measured < measured->measured) measured = &row;
  }
  std::vector<ScenarioPick> picks;
  for (const auto& [scenario, pair] : best) {
    picks.push_back({.scenario = scenario, .predicted_best = pair.first->what, .measured_best = pair.second->what,
                     .loss_pct = 100.0 * (pair.first->measured - pair.second->measured) / pair.second->measured});
  }
  return picks;
}

ErrorSummary summarize_errors(const std::vector<ValidationRow>& rows) {
  if (rows.empty()) return {};
  std::vector<double> errors;
  for (const auto& row : rows) errors.push_back(std::abs(row.error_pct()));
  std::sort(errors.begin(), errors.end());
  const std::size_t middle = errors.size() / 2;
  return {.median_pct = errors.size() % 2 == 1 ? errors[middle] : 0.5 * (errors[middle - 1] + errors[middle]),
          .worst_pct = errors.back()};
}

}  // namespace meshcomm::advisor
