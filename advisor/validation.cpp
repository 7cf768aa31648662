#include "validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "advice.hpp"
#include "perf_records.hpp"
#include "median.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::advisor {

namespace {

/// The prediction of one layer_perf record, or the reason it cannot be made.
std::string predict_layer_record(const nlohmann::json& json, const MachineModel& machine, ValidationRow& row) {
  LayerRecord record;
  if (auto reason = read_layer_record(json, record); !reason.empty()) return reason;
  const auto& shape = record.shape;
  row = {.what = fmt::format("{} {}", record.choice.label(), shape.name),
         .scenario = fmt::format("{} ranks, {}, {} attention", record.ranks, to_string(shape),
                                 shape.sliding() ? "sliding" : "full"),
         .measured = record.step_seconds,
         .predicted = predict_on_one_node(shape, record.choice, machine).step()};
  return {};
}

}  // namespace

Validation validate(const std::vector<std::string>& paths, const MachineModel& machine, double min_bytes) {
  Validation validation;
  std::map<std::pair<std::string, std::string>, std::vector<ValidationRow>> steps_by_case;
  for (const auto& path : paths) {
    for (const auto& record : read_records(path, "validate")) {
      if (is_layer_record(record)) {
        ValidationRow row;
        if (auto reason = predict_layer_record(record, machine, row); !reason.empty()) {
          validation.skipped.push_back(
              fmt::format("{}: {} on {}: {}", path, record.value("case", ""), record.value("mesh_dim", ""), reason));
          continue;
        }
        steps_by_case[{row.scenario, row.what}].push_back(std::move(row));
      } else if (const auto call = read_collective_record(record)) {
        if (call->algorithm != "auto" || call->bytes < min_bytes) continue;
        const GroupLinks links{.ranks = call->ranks};
        validation.collectives.push_back(
            {.what = fmt::format("{} x{} {:.0f} B", to_string(call->op), call->ranks, call->bytes),
             .measured = call->time_us,
             .predicted = collective_seconds(machine, call->op, call->bytes, links) * 1e6});
      }
    }
  }
  // A case measured in several runs counts once, at its median: runs differ more than repeats.
  for (auto& [key, rows] : steps_by_case) {
    std::vector<double> measured;
    for (const auto& row : rows) measured.push_back(row.measured);
    ValidationRow merged = rows.front();
    merged.measured = median_of(std::move(measured));
    validation.steps.push_back(std::move(merged));
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
    picks.push_back({.scenario = scenario,
                     .predicted_best = pair.first->what,
                     .measured_best = pair.second->what,
                     .loss_pct = 100.0 * (pair.first->measured - pair.second->measured) / pair.second->measured});
  }
  return picks;
}

ErrorSummary summarize_errors(const std::vector<ValidationRow>& rows) {
  if (rows.empty()) return {};
  std::vector<double> errors;
  for (const auto& row : rows) errors.push_back(std::abs(row.error_pct()));
  const double worst = *std::max_element(errors.begin(), errors.end());
  return {.median_pct = median_of(std::move(errors)), .worst_pct = worst};
}

}  // namespace meshcomm::advisor
