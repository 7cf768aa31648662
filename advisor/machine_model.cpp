#include "machine_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>

#include "meshcomm/error.hpp"

namespace meshcomm::advisor {

namespace {

constexpr std::array<CollectiveOp, 5> kOps{CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                                           CollectiveOp::all_reduce, CollectiveOp::alltoall, CollectiveOp::sendrecv};

double parse_positive(std::string_view option, std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !(value > 0)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: '{}' is not a positive number", option, text));
  }
  return value;
}

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::invalid_argument, fmt::format("calibration {}: {}", path, what));
}

/// {"2": 1.1, "4": 2.3}: a factor per rank count.
std::map<int, double> read_rank_map(const nlohmann::json& json, const char* key, const std::string& path) {
  std::map<int, double> values;
  const nlohmann::json entries = json.value(key, nlohmann::json::object());
  for (const auto& [ranks, value] : entries.items()) {
    int count = 0;
    const auto [end, error] = std::from_chars(ranks.data(), ranks.data() + ranks.size(), count);
    if (error != std::errc{} || end != ranks.data() + ranks.size() || count < 1) {
      malformed(path, fmt::format("{} key '{}' is not a rank count", key, ranks));
    }
    values[count] = value.get<double>();
  }
  return values;
}

nlohmann::json rank_map_json(const std::map<int, double>& values) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [ranks, value] : values) json[std::to_string(ranks)] = value;
  return json;
}

}  // namespace

std::string_view to_string(CollectiveOp op) noexcept {
  switch (op) {
    case CollectiveOp::all_gather:
      return "all_gather";
    case CollectiveOp::reduce_scatter:
      return "reduce_scatter";
    case CollectiveOp::all_reduce:
      return "all_reduce";
    case CollectiveOp::alltoall:
      return "alltoall";
    case CollectiveOp::sendrecv:
      return "sendrecv";
  }
  return "?";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view name) noexcept {
  for (auto op : kOps) {
    if (to_string(op) == name) return op;
  }
  return std::nullopt;
}

LinkSpeed parse_link_speed(std::string_view option, std::string_view text) {
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos) {
    throw Error(
        ErrorCode::invalid_argument,
        fmt::format("{} '{}' is not BANDWIDTH,LATENCY (GB/s per rank, microseconds), e.g. 25,10", option, text));
  }
  return {.bandwidth_gbps = parse_positive(option, text.substr(0, comma)),
          .latency_us = parse_positive(option, text.substr(comma + 1))};
}

double CollectiveFit::time_us(double bytes) const {
  if (segments.empty()) return 0;
  // Nothing is faster than the smallest call measured.
  if (bytes <= segments.front().min_bytes) return segments.front().time_us(segments.front().min_bytes);
  for (const auto& segment : segments) {
    if (bytes <= segment.max_bytes) return segment.time_us(bytes);
  }
  return segments.back().time_us(bytes);
}

double MachineModel::core_turns(int ranks_per_node) const {
  return cores_per_node > 0 ? std::max(1.0, static_cast<double>(ranks_per_node) / cores_per_node) : 1.0;
}

double MachineModel::compute_slowdown(int ranks_per_node) const {
  const bool oversubscribed = cores_per_node > 0 && ranks_per_node > cores_per_node;
  const auto at_cores = node_sharing.find(oversubscribed ? cores_per_node : ranks_per_node);
  return (at_cores != node_sharing.end() ? at_cores->second : 1.0) * core_turns(ranks_per_node);
}

const CollectiveFit* MachineModel::fit_for(CollectiveOp op, int ranks) const {
  for (const auto& fit : fits) {
    if (fit.op == op && fit.ranks == ranks && fit.algorithm == "auto") return &fit;
  }
  return nullptr;
}

MachineModel load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::invalid_argument, fmt::format("--calibration {}: cannot read it", path));
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    malformed(path, fmt::format("not JSON ({})", error.what()));
  }
  MachineModel machine;
  machine.source = path;
  try {
    if (json.contains("intra")) machine.intra = {json["intra"].at("bandwidth_gbps"), json["intra"].at("latency_us")};
    if (json.contains("inter")) machine.inter = {json["inter"].at("bandwidth_gbps"), json["inter"].at("latency_us")};
    if (json.contains("compute")) {
      const auto& compute = json["compute"];
      machine.compute = {
          .gemm_flops_per_s = compute.at("gemm_flops_per_s"),
          .attention_flops_per_s = compute.at("attention_flops_per_s"),
          .seconds_per_pair = compute.value("seconds_per_pair", ComputeSpeed{}.seconds_per_pair),
          .seconds_per_scan = compute.at("seconds_per_scan"),
          .activations_per_s = compute.value("activations_per_s", ComputeSpeed{}.activations_per_s),
          .optimizer_bytes_per_s = compute.value("optimizer_bytes_per_s", ComputeSpeed{}.optimizer_bytes_per_s)};
    }
    machine.memory_bytes = json.value("memory_bytes", machine.memory_bytes);
    machine.cores_per_node = json.value("cores_per_node", 0);
    machine.nics_per_node = json.value("nics_per_node", machine.nics_per_node);
    machine.node_sharing = read_rank_map(json, "node_sharing", path);
    machine.oversubscribed_layer_seconds = read_rank_map(json, "oversubscribed_layer_seconds", path);
    const nlohmann::json exchange_calls = json.value("exchange_call_us", nlohmann::json::object());
    for (const auto& [exchange, cost] : exchange_calls.items()) machine.exchange_call_us[exchange] = cost.get<double>();
    const nlohmann::json collectives = json.value("collectives", nlohmann::json::array());
    for (const auto& entry : collectives) {
      const std::string op_name = entry.at("op");
      const auto op = parse_collective_op(op_name);
      if (!op) malformed(path, fmt::format("collective op '{}' is not one the model uses", op_name));
      CollectiveFit fit{.op = *op,
                        .algorithm = entry.at("algo"),
                        .ranks = entry.at("ranks"),
                        .points = entry.value("points", 0),
                        .median_error_pct = entry.value("median_error_pct", 0.0)};
      for (const auto& segment : entry.at("segments")) {
        fit.segments.push_back(
            {segment.at("min_bytes"), segment.at("max_bytes"), segment.at("alpha_us"), segment.at("beta_us_per_byte")});
      }
      machine.fits.push_back(std::move(fit));
    }
  } catch (const nlohmann::json::exception& error) {
    malformed(path, fmt::format("a field is missing or of the wrong type ({})", error.what()));
  }
  return machine;
}

void save_calibration(const MachineModel& machine, const std::string& path) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& fit : machine.fits) {
    nlohmann::json segments = nlohmann::json::array();
    for (const auto& s : fit.segments) {
      segments.push_back({{"min_bytes", s.min_bytes},
                          {"max_bytes", s.max_bytes},
                          {"alpha_us", s.alpha_us},
                          {"beta_us_per_byte", s.beta_us_per_byte}});
    }
    collectives.push_back({{"op", to_string(fit.op)},
                           {"algo", fit.algorithm},
                           {"ranks", fit.ranks},
                           {"points", fit.points},
                           {"median_error_pct", fit.median_error_pct},
                           {"segments", segments}});
  }
  const auto& c = machine.compute;
  const nlohmann::json json{
      {"intra", {{"bandwidth_gbps", machine.intra.bandwidth_gbps}, {"latency_us", machine.intra.latency_us}}},
      {"inter", {{"bandwidth_gbps", machine.inter.bandwidth_gbps}, {"latency_us", machine.inter.latency_us}}},
      {"compute",
       {{"gemm_flops_per_s", c.gemm_flops_per_s},
        {"attention_flops_per_s", c.attention_flops_per_s},
        {"seconds_per_pair", c.seconds_per_pair},
        {"seconds_per_scan", c.seconds_per_scan},
        {"activations_per_s", c.activations_per_s},
        {"optimizer_bytes_per_s", c.optimizer_bytes_per_s}}},
      {"memory_bytes", machine.memory_bytes},
      {"cores_per_node", machine.cores_per_node},
      {"nics_per_node", machine.nics_per_node},
      {"node_sharing", rank_map_json(machine.node_sharing)},
      {"oversubscribed_layer_seconds", rank_map_json(machine.oversubscribed_layer_seconds)},
      {"exchange_call_us", machine.exchange_call_us},
      {"collectives", collectives}};
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::invalid_argument, fmt::format("calibrate: cannot write {}", path));
  out << json.dump(2) << "\n";
}

}  // namespace meshcomm::advisor
