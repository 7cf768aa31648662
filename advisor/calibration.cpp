#include "calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "advice.hpp"
#include "median.hpp"
#include "meshcomm/error.hpp"
#include "perf_records.hpp"

namespace meshcomm::advisor {

namespace {

/// The compute model's terms: GEMM flops, attention flops, visible pairs, visited pairs,
/// activations, optimizer bytes.
constexpr int kTerms = 6;
using Terms = std::array<double, kTerms>;

/// Least squares of A θ = b restricted to the columns in `mask`; false when singular.
bool solve_subset(const std::vector<Terms>& a, const std::vector<double>& b, unsigned mask, Terms& theta) {
  std::vector<int> columns;
  for (int j = 0; j < kTerms; ++j) {
    if ((mask >> j) & 1U) columns.push_back(j);
  }
  const std::size_t n = columns.size();
  std::vector<std::vector<double>> normal(n, std::vector<double>(n + 1, 0.0));
  for (std::size_t row = 0; row < a.size(); ++row) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < n; ++k) normal[i][k] += a[row][columns[i]] * a[row][columns[k]];
      normal[i][n] += a[row][columns[i]] * b[row];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // Gaussian elimination with partial pivoting
    std::size_t pivot = i;
    for (std::size_t r = i + 1; r < n; ++r) {
      if (std::abs(normal[r][i]) > std::abs(normal[pivot][i])) pivot = r;
    }
    std::swap(normal[i], normal[pivot]);
    if (std::abs(normal[i][i]) < 1e-300) return false;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == i) continue;
      const double factor = normal[r][i] / normal[i][i];
      for (std::size_t k = i; k <= n; ++k) normal[r][k] -= factor * normal[i][k];
    }
  }
  theta = {};
  for (std::size_t i = 0; i < n; ++i) theta[columns[i]] = normal[i][n] / normal[i][i];
  return true;
}

Terms features(const ComputeWork& work) {
  return {work.gemm_flops,      work.attention_flops, work.attention_pairs,
          work.attention_scans, work.activations,     work.optimizer_bytes};
}

/// A one-rank step's work: the blocks, the output projection and loss, and AdamW.
ComputeWork step_work(const LayerRecord& layer) {
  const ComputeWork block = block_work(layer.shape, layer.choice);
  const EndsWork ends = ends_work(layer.shape, layer.choice);
  const double layers = static_cast<double>(layer.shape.layers);
  return {.gemm_flops = layers * block.gemm_flops + ends.gemm_flops,
          .attention_flops = layers * block.attention_flops,
          .attention_pairs = layers * block.attention_pairs,
          .attention_scans = layers * block.attention_scans,
          .activations = layers * block.activations + ends.activations,
          .optimizer_bytes = ends.optimizer_bytes};
}

/// From `shared` (fsdp-only runs on one node): for each rank count up to the cores, the median
/// over its records of (measured step − predicted communication − attention) / the rest of the
/// compute of one rank alone; beyond the cores, the median of what the step lost per layer to
/// ranks taking turns, once the compute has taken its turns.
void node_sharing(MachineModel& machine, const std::vector<LayerRecord>& shared) {
  machine.node_sharing.clear();
  machine.oversubscribed_layer_seconds.clear();
  std::map<int, std::vector<double>> factors, losses;
  MachineModel alone = machine;
  alone.cores_per_node = 0;
  for (const bool beyond_cores : {false, true}) {  // the factors within the cores first: turns build on them
    for (const auto& layer : shared) {
      if ((machine.cores_per_node > 0 && layer.ranks > machine.cores_per_node) != beyond_cores) continue;
      if (!beyond_cores) {
        const auto step = predict_on_one_node(layer.shape, layer.choice, alone);
        const double rest = step.compute - step.attention_compute;
        if (rest <= 0) continue;
        factors[layer.ranks].push_back(
            std::max(1e-3, (layer.step_seconds - (step.step() - step.compute) - step.attention_compute) / rest));
      } else {
        const auto step = predict_on_one_node(layer.shape, layer.choice, machine);
        losses[layer.ranks].push_back(
            std::max(0.0, (layer.step_seconds - step.step()) / static_cast<double>(layer.shape.layers)));
      }
    }
    for (auto& [ranks, values] : factors) machine.node_sharing[ranks] = median_of(values);
  }
  for (auto& [ranks, values] : losses) machine.oversubscribed_layer_seconds[ranks] = median_of(std::move(values));
}

/// For each exchange of `exchanged` (sp-only runs on one node): the median over its records of
/// (measured step − predicted step) / exchange calls, in µs, at least 0.
std::map<std::string, double> exchange_call_costs(const MachineModel& machine,
                                                  const std::vector<LayerRecord>& exchanged) {
  MachineModel plain = machine;
  plain.exchange_call_us.clear();  // what is left over the step without them is theirs
  std::map<std::string, std::vector<double>> costs;
  for (const auto& layer : exchanged) {
    const double predicted = predict_on_one_node(layer.shape, layer.choice, plain).step();
    const double calls = 2.0 * static_cast<double>(layer.shape.layers) *
                         static_cast<double>(layer.shape.batch / static_cast<std::size_t>(layer.choice.data_ranks()));
    costs[std::string(to_string(layer.choice.exchange))].push_back(
        std::max(0.0, (layer.step_seconds - predicted) / calls * 1e6));
  }
  std::map<std::string, double> result;
  for (auto& [exchange, values] : costs) result[exchange] = median_of(std::move(values));
  return result;
}

}  // namespace

CollectiveFit fit_collective(CollectiveOp op, std::string algorithm, int ranks, std::vector<CollectivePoint> points) {
  CollectiveFit fit{
      .op = op, .algorithm = std::move(algorithm), .ranks = ranks, .points = static_cast<int>(points.size())};
  std::erase_if(points, [](const CollectivePoint& p) { return !(p.bytes > 0 && p.time_us > 0); });
  if (points.empty()) return fit;
  // Runs repeated at one size count once, at their median.
  std::map<double, std::vector<double>> by_size;
  for (const auto& point : points) by_size[point.bytes].push_back(point.time_us);
  std::vector<CollectivePoint> sizes;
  for (auto& [bytes, times] : by_size) sizes.push_back({bytes, median_of(std::move(times))});
  if (sizes.size() == 1) {
    fit.segments.push_back({.min_bytes = sizes[0].bytes, .max_bytes = sizes[0].bytes, .alpha_us = sizes[0].time_us});
    return fit;
  }
  // One alpha-beta line per interval between measured sizes: the library switches algorithms and
  // the caches switch regimes between them, so no single line holds across the range.
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const auto& low = sizes[i];
    const auto& high = sizes[i + 1];
    const double beta = (high.time_us - low.time_us) / (high.bytes - low.bytes);
    fit.segments.push_back({.min_bytes = low.bytes,
                            .max_bytes = high.bytes,
                            .alpha_us = low.time_us - beta * low.bytes,
                            .beta_us_per_byte = beta});
  }
  std::vector<double> errors;
  for (const auto& point : points)
    errors.push_back(100.0 * std::abs(fit.time_us(point.bytes) - point.time_us) / point.time_us);
  fit.median_error_pct = median_of(errors);
  return fit;
}

ComputeSpeed fit_compute(const std::vector<ComputePoint>& points, const ComputeSpeed& fallback,
                         double& median_error_pct) {
  std::vector<Terms> a;
  std::vector<double> b;
  for (const auto& point : points) {
    if (!(point.seconds > 0)) continue;
    auto row = features(point.work);
    for (double& x : row) x /= point.seconds;  // relative error: every row's target is 1
    a.push_back(row);
    b.push_back(1.0);
  }
  ComputeSpeed speed = fallback;
  median_error_pct = 0;
  if (a.empty()) return speed;
  auto predicted = [](const Terms& row, const Terms& theta) {
    double sum = 0;
    for (int j = 0; j < kTerms; ++j) sum += row[j] * theta[j];
    return sum;
  };
  Terms best{};
  double best_residual = std::numeric_limits<double>::infinity();
  // Every step multiplies matrices and attends: subsets that keep the GEMMs and an attention term
  // (its flops or its pairs) are tried first, so that a term the noise cannot tell apart from
  // another is not dropped for it.
  constexpr unsigned kGemm = 1U, kAttention = 2U | 4U;
  for (const bool keep_both : {true, false}) {
    for (unsigned mask = 1; mask < (1U << kTerms); ++mask) {
      if (keep_both && ((mask & kGemm) == 0 || (mask & kAttention) == 0)) continue;
      Terms theta{};
      if (!solve_subset(a, b, mask, theta)) continue;
      if (std::any_of(theta.begin(), theta.end(), [](double t) { return t < 0; })) continue;
      double residual = 0;
      for (const auto& row : a) residual += (predicted(row, theta) - 1) * (predicted(row, theta) - 1);
      if (residual < best_residual) {
        best_residual = residual;
        best = theta;
      }
    }
    if (best_residual < std::numeric_limits<double>::infinity()) break;
  }
  // θ are seconds per unit; a term the data never needed costs nothing.
  constexpr double kFree = 1e30;
  speed.gemm_flops_per_s = best[0] > 0 ? 1 / best[0] : kFree;
  speed.attention_flops_per_s = best[1] > 0 ? 1 / best[1] : kFree;
  speed.seconds_per_pair = best[2];
  speed.seconds_per_scan = best[3];
  speed.activations_per_s = best[4] > 0 ? 1 / best[4] : kFree;
  speed.optimizer_bytes_per_s = best[5] > 0 ? 1 / best[5] : kFree;
  std::vector<double> errors;
  for (const auto& row : a) errors.push_back(100.0 * std::abs(predicted(row, best) - 1));
  median_error_pct = median_of(errors);
  return speed;
}

MachineModel calibrate(const std::vector<std::string>& paths, const MachineModel& base, int cores_per_node,
                       CalibrationSummary& summary) {
  using Key = std::tuple<CollectiveOp, std::string, int>;
  std::map<Key, std::vector<CollectivePoint>> measured;
  std::vector<ComputePoint> steps;
  std::vector<LayerRecord> shared, exchanged;
  for (const auto& path : paths) {
    int used = 0;
    for (const auto& record : read_records(path, "calibrate")) {
      if (const auto call = read_collective_record(record)) {
        measured[{call->op, call->algorithm, call->ranks}].push_back({call->bytes, call->time_us});
        summary.collective_records += 1;
        used += 1;
      } else if (is_layer_record(record)) {
        LayerRecord layer;
        if (!read_layer_record(record, layer).empty()) continue;
        if (layer.ranks == 1) {
          steps.push_back({step_work(layer), layer.step_seconds});
        } else if (layer.choice.fsdp == layer.ranks) {
          shared.push_back(layer);  // every rank computes beside the others: how much slower?
        } else if (layer.choice.sp == layer.ranks) {
          exchanged.push_back(layer);  // the exchange alone: what its calls cost beyond the messages
        } else {
          continue;
        }
        summary.layer_records += 1;
        used += 1;
      }
    }
    if (used == 0) {
      throw Error(
          ErrorCode::invalid_argument,
          fmt::format("calibrate: {} holds no perftest records (op, algo, ranks, bytes, time_us) and no layer_perf "
                      "records the calibration uses (one rank, or fsdp only)",
                      path));
    }
  }
  MachineModel machine = base;
  machine.source = "calibration";
  machine.cores_per_node = cores_per_node;
  machine.fits.clear();
  for (auto& [key, points] : measured) {
    const auto& [op, algorithm, ranks] = key;
    machine.fits.push_back(fit_collective(op, algorithm, ranks, std::move(points)));
  }
  // The node's link, for groups the calibration did not measure: all-gather's bus bandwidth at
  // its largest sizes and the smallest send-recv's latency.
  for (const auto& fit : machine.fits) {
    if (fit.algorithm != "auto" || fit.segments.empty()) continue;
    const auto& last = fit.segments.back();
    if (fit.op == CollectiveOp::all_gather && last.beta_us_per_byte > 0) {
      machine.intra.bandwidth_gbps = (fit.ranks - 1.0) / fit.ranks / last.beta_us_per_byte * 1e-3;
    }
    if (fit.op == CollectiveOp::sendrecv) machine.intra.latency_us = std::max(0.1, fit.segments.front().alpha_us);
  }
  if (!steps.empty()) {
    machine.compute = fit_compute(steps, base.compute, summary.compute_median_error_pct);
  } else {
    summary.notes.push_back("no one-rank layer_perf records: compute speeds left as given");
  }
  node_sharing(machine, shared);
  if (shared.empty())
    summary.notes.push_back("no fsdp-only layer_perf records on several ranks: ranks share a node's cores evenly");
  machine.exchange_call_us = exchange_call_costs(machine, exchanged);
  if (exchanged.empty()) summary.notes.push_back("no sp-only layer_perf records: exchanges cost their messages only");
  if (measured.empty()) summary.notes.push_back("no perftest records: collectives fall back to the links");
  return machine;
}

}  // namespace meshcomm::advisor
