#include "calibration.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include "meshcomm/error.hpp"

namespace meshcomm::advisor {

namespace {

constexpr std::array<double, 2> kSegmentEdges{64.0 * 1024, 1024.0 * 1024};

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

/// alpha + beta·n through `points`, weights 1/t² (relative error), alpha and beta ≥ 0.
AlphaBeta fit_line(const std::vector<CollectivePoint>& points) {
  double sw = 0, swn = 0, swnn = 0, swt = 0, swnt = 0;
  for (const auto& p : points) {
    const double w = 1.0 / (p.time_us * p.time_us);
    sw += w;
    swn += w * p.bytes;
    swnn += w * p.bytes * p.bytes;
    swt += w * p.time_us;
    swnt += w * p.bytes * p.time_us;
  }
  AlphaBeta line{.min_bytes = points.front().bytes, .max_bytes = points.back().bytes};
  const double determinant = sw * swnn - swn * swn;
  if (determinant > 0) {
    line.alpha_us = (swnn * swt - swn * swnt) / determinant;
    line.beta_us_per_byte = (sw * swnt - swn * swt) / determinant;
  }
  if (determinant <= 0 || line.alpha_us < 0) {
    line.alpha_us = 0;
    line.beta_us_per_byte = swnn > 0 ? swnt / swnn : 0;
  }
  if (line.beta_us_per_byte < 0) {
    line.beta_us_per_byte = 0;
    line.alpha_us = swt / sw;
  }
  return line;
}

/// Least squares of A θ = b restricted to the columns in `mask`; false when singular.
bool solve_subset(const std::vector<std::array<double, 4>>& a, const std::vector<double>& b, unsigned mask,
                  std::array<double, 4>& theta) {
  std::vector<int> columns;
  for (int j = 0; j < 4; ++j) {
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
  theta = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) theta[columns[i]] = normal[i][n] / normal[i][i];
  return true;
}

std::array<double, 4> features(const BlockWork& work) {
  return {work.gemm_flops, work.attention_flops, work.attention_scans, work.elementwise_bytes};
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::invalid_argument, fmt::format("calibrate: cannot read {}", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw Error(ErrorCode::invalid_argument, fmt::format("calibrate: {} is not JSON ({})", path, error.what()));
  }
}

}  // namespace

CollectiveFit fit_collective(CollectiveOp op, std::string algorithm, int ranks, std::vector<CollectivePoint> points) {
  CollectiveFit fit{.op = op, .algorithm = std::move(algorithm), .ranks = ranks, .points = static_cast<int>(points.size())};
  std::erase_if(points, [](const CollectivePoint& p) { return !(p.bytes > 0 && p.time_us > 0); });
  if (points.empty()) return fit;
  std::sort(points.begin(), points.end(), [](const auto& x, const auto& y) { return x.bytes < y.bytes; });
  std::vector<std::vector<CollectivePoint>> segments(kSegmentEdges.size() + 1);
  for (const auto& point : points) {
    const auto segment = static_cast<std::size_t>(
        std::upper_bound(kSegmentEdges.begin(), kSegmentEdges.end(), point.bytes - 1) - kSegmentEdges.begin());
    segments[segment].push_back(point);
  }
  std::erase_if(segments, [](const auto& s) { return s.empty(); });
  // A lone point cannot fix a line: it joins the segment before it (or after, for the first).
  for (std::size_t i = 0; i < segments.size() && segments.size() > 1;) {
    if (segments[i].size() >= 2) {
      ++i;
      continue;
    }
    const std::size_t into = i > 0 ? i - 1 : i + 1;
    segments[into].insert(segments[into].end(), segments[i].begin(), segments[i].end());
    std::sort(segments[into].begin(), segments[into].end(), [](const auto& x, const auto& y) { return x.bytes < y.bytes; });
    segments.erase(segments.begin() + static_cast<std::ptrdiff_t>(i));
    i = 0;
  }
  std::vector<double> errors;
  for (const auto& segment : segments) {
    fit.segments.push_back(fit_line(segment));
    for (const auto& point : segment) {
      errors.push_back(100.0 * std::abs(fit.segments.back().time_us(point.bytes) - point.time_us) / point.time_us);
    }
  }
  fit.median_error_pct = median_of(errors);
  return fit;
}

ComputeSpeed fit_compute(const std::vector<ComputePoint>& points, const ComputeSpeed& fallback, double& median_error_pct) {
  std::vector<std::array<double, 4>> a;
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
  std::array<double, 4> best{};
  double best_residual = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < 16; ++mask) {
    std::array<double, 4> theta{};
    if (!solve_subset(a, b, mask, theta)) continue;
    if (std::any_of(theta.begin(), theta.end(), [](double t) { return t < 0; })) continue;
    double residual = 0;
    for (std::size_t row = 0; row < a.size(); ++row) {
      double predicted = 0;
      for (int j = 0; j < 4; ++j) predicted += a[row][j] * theta[j];
      residual += (predicted - 1) * (predicted - 1);
    }
    if (residual < best_residual) {
      best_residual = residual;
      best = theta;
    }
  }
  // θ are seconds per unit; a term the data never needed costs nothing.
  constexpr double kFree = 1e30;
  speed.gemm_flops_per_s = best[0] > 0 ? 1 / best[0] : kFree;
  speed.attention_flops_per_s = best[1] > 0 ? 1 / best[1] : kFree;
  speed.seconds_per_scan = best[2];
  speed.elementwise_bytes_per_s = best[3] > 0 ? 1 / best[3] : kFree;
  std::vector<double> errors;
  for (const auto& row : a) {
    double predicted = 0;
    for (int j = 0; j < 4; ++j) predicted += row[j] * best[j];
    errors.push_back(100.0 * std::abs(predicted - 1));
  }
  median_error_pct = median_of(errors);
  return speed;
}

MachineModel calibrate(const std::vector<std::string>& paths, const MachineModel& base, int cores_per_node,
                       CalibrationSummary& summary) {
  using Key = std::tuple<CollectiveOp, std::string, int>;
  std::map<Key, std::vector<CollectivePoint>> measured;
  std::vector<ComputePoint> blocks;
  for (const auto& path : paths) {
    const nlohmann::json json = read_json(path);
    if (!json.is_array()) throw Error(ErrorCode::invalid_argument, fmt::format("calibrate: {} holds no records (not an array)", path));
    int used = 0;
    for (const auto& record : json) {
      if (record.contains("op")) {
        const auto op = parse_collective_op(record.value("op", ""));
        const std::string algorithm = record.value("algo", "");
        if (!op || algorithm.starts_with("mpi_") || record.value("wrong", 0) != 0 || record.value("in_place", false)) continue;
        measured[{*op, algorithm, record.value("ranks", 0)}].push_back({record.value("bytes", 0.0), record.value("time_us", 0.0)});
        summary.collective_records += 1;
        used += 1;
      } else if (record.contains("case") && record.value("ranks", 0) == 1) {
        ModelShape shape{.layers = record.at("layers"), .width = record.at("width"), .heads = record.at("heads"),
                         .kv_heads = record.at("heads"), .hidden = record.at("hidden"), .vocab = 0,
                         .sequence = record.at("seq"), .batch = record.at("batch"), .element_bytes = 4,
                         .window = record.at("window")};
        const MeshChoice choice{.exchange = parse_sequence_exchange(record.value("exchange", "ring"))};
        blocks.push_back({block_work(shape, choice), record.value("time_per_layer_ms", 0.0) * 1e-3});
        summary.layer_records += 1;
        used += 1;
      }
    }
    if (used == 0) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("calibrate: {} holds no perftest records (op, algo, ranks, bytes, time_us) and no one-rank "
                              "layer_perf records (case, ranks 1, time_per_layer_ms)", path));
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
  if (!blocks.empty()) {
    machine.compute = fit_compute(blocks, base.compute, summary.compute_median_error_pct);
  } else {
    summary.notes.push_back("no one-rank layer_perf records: compute speeds left as given");
  }
  if (measured.empty()) summary.notes.push_back("no perftest records: collectives fall back to the links");
  return machine;
}

}  // namespace meshcomm::advisor
