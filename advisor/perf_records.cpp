#include "perf_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm::advisor {

namespace {

int axis_size(const MeshSpec& spec, std::string_view name) {
  const auto position = spec.find(name);
  return position ? spec.axes()[*position].size : 1;
}

}  // namespace

nlohmann::json read_records(const std::string& path, std::string_view command) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::invalid_argument, fmt::format("{}: cannot read {}", command, path));
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} is not JSON ({})", command, path, error.what()));
  }
  if (!json.is_array()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} is not an array of records", command, path));
  }
  return json;
}

std::optional<CollectiveRecord> read_collective_record(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("op")) return std::nullopt;
  const auto op = parse_collective_op(record.value("op", ""));
  const std::string algorithm = record.value("algo", "");
  if (!op || algorithm.starts_with("mpi_") || record.value("wrong", 0) != 0 || record.value("in_place", false)) {
    return std::nullopt;
  }
  return CollectiveRecord{.op = *op, .algorithm = algorithm, .ranks = record.value("ranks", 0),
                          .bytes = record.value("bytes", 0.0), .time_us = record.value("time_us", 0.0)};
}

bool is_layer_record(const nlohmann::json& record) { return record.is_object() && record.contains("case"); }

std::string read_layer_record(const nlohmann::json& record, LayerRecord& out) {
  try {
    out.ranks = record.at("ranks");
    const MeshSpec spec = MeshSpec::parse(record.at("mesh_dim").get<std::string>()).resolved(out.ranks);
    out.choice = {.dp = axis_size(spec, "dp"),
                  .fsdp = axis_size(spec, "fsdp"),
                  .tp = axis_size(spec, "tp"),
                  .sp = axis_size(spec, "sp"),
                  .exchange = parse_sequence_exchange(record.at("exchange").get<std::string>())};
    const std::string shard_text = record.value("fsdp_axes", std::string("fsdp"));  // the views below point into it
    const auto shard_axes = split_axis_list(shard_text);
    const auto shards = [&](std::string_view axis) {
      return std::find(shard_axes.begin(), shard_axes.end(), axis) != shard_axes.end();
    };
    out.choice.sp_in_shard = shards("sp");
    out.shape = {.name = record.at("case"),
                 .layers = record.at("layers"),
                 .width = record.at("width"),
                 .heads = record.at("heads"),
                 .kv_heads = record.at("heads"),
                 .hidden = record.at("hidden"),
                 .vocab = record.value("vocab", std::size_t{64}),
                 .sequence = record.at("seq"),
                 .batch = record.at("batch"),
                 .element_bytes = 4,
                 .window = record.at("window")};
    out.step_seconds = record.at("step_ms").get<double>() * 1e-3;
    if (shards("dp") && out.choice.dp > 1) return "dp shards the parameters here; the advisor's dp replicates";
    if (!shards("fsdp") && out.choice.fsdp > 1) return "fsdp does not shard the parameters here";
    if (!record.value("prefetch", true)) return "no prefetch: the advisor plans FSDP with prefetch";
    return infeasibility(out.shape, out.choice);
  } catch (const nlohmann::json::exception& error) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("layer_perf record: a field is missing or malformed ({})", error.what()));
  }
}

}  // namespace meshcomm::advisor
