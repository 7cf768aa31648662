#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

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
