#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "machine_model.hpp"
#include "mesh_choice.hpp"
#include "model_shape.hpp"

// The perftests' and layer_perf's `--json` records, as calibrate and validate read them.

namespace meshcomm::advisor {

/// The records of one `--json` file. `command` ("calibrate", "validate") prefixes the errors,
/// which name the file: it cannot be read, is not JSON, or is not an array of records.
nlohmann::json read_records(const std::string& path, std::string_view command);

/// One perftest record of meshcomm's own call (not Open MPI's rows), out of place, with right results.
struct CollectiveRecord {
  CollectiveOp op = CollectiveOp::all_gather;
  std::string algorithm;  ///< "auto": the library's own selection
  int ranks = 0;
  double bytes = 0;
  double time_us = 0;
};

/// `record` as a CollectiveRecord, or nothing when it is not one the model uses.
std::optional<CollectiveRecord> read_collective_record(const nlohmann::json& record);

/// One layer_perf `--json` record as the advisor sees it: the model, the mesh choice it ran, and
/// its measured step.
struct LayerRecord {
  ModelShape shape;
  MeshChoice choice;
  int ranks = 1;
  double step_seconds = 0;
};

/// True when `record` is a layer_perf record (it names a case).
bool is_layer_record(const nlohmann::json& record);

/// Reads `record` into `out`; returns why the advisor cannot model it (dp sharding the
/// parameters, fsdp not sharding them, no prefetch, a mesh the layers cannot run), or empty.
/// Throws Error(invalid_argument) when a field is missing or malformed.
std::string read_layer_record(const nlohmann::json& record, LayerRecord& out);

}  // namespace meshcomm::advisor
