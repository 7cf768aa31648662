#pragma once

#include <string>
#include <vector>

#include "machine_model.hpp"
#include "memory_model.hpp"
#include "mesh_choice.hpp"
#include "meshcomm/placement.hpp"
#include "meshcomm/topology.hpp"
#include "model_shape.hpp"
#include "step_time.hpp"
#include "traffic_model.hpp"

namespace meshcomm::advisor {

/// One mesh choice with everything predicted for it.
struct RankedChoice {
  MeshChoice choice;
  StepPrediction time;
  MemoryEstimate memory;  ///< of the rank that holds the most
  StepBytes bytes;        ///< of the rank that sends the most
  std::vector<std::string> warnings;
};

/// The ranking: choices that run, fastest first, and those left out with why.
struct Advice {
  std::vector<RankedChoice> ranked;
  std::vector<PrunedChoice> pruned;
};

/// What the advisor is asked.
struct AdviceRequest {
  ModelShape shape;
  MachineModel machine;
  Placement placement;
  ChoiceConstraints constraints;
};

/// The links of `choice`'s groups when placed by `placement` on `topology`.
MeshLinks mesh_links(const MeshChoice& choice, const Placement& placement, const Topology& topology, int nics_per_node);

/// Predicts `choice` with its ranks all on one node (as the perftests on one machine ran it).
StepPrediction predict_on_one_node(const ModelShape& shape, const MeshChoice& choice, const MachineModel& machine);

/// Predicts every choice for `request` on `topology` and ranks them by step time (less memory
/// first on a tie); choices over the memory budget join the pruned ones.
Advice advise(const AdviceRequest& request, const Topology& topology);

/// Why `first` beats `second`: the step-time parts that differ most, and the memory.
std::string explain(const RankedChoice& first, const RankedChoice& second);

}  // namespace meshcomm::advisor
