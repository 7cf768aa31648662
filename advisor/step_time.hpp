#pragma once

#include "compute_model.hpp"
#include "link_model.hpp"
#include "machine_model.hpp"
#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// The links of the groups a step uses: tp, sp, the FSDP shard group and the replicas.
struct MeshLinks {
  GroupLinks tp, sp, shard, replicas;
  int ranks_per_node = 1;  ///< the most ranks any node holds (they share its cores)
};

/// A step's predicted seconds on the busiest rank: compute, and each axis's communication left
/// exposed after overlap (FSDP gathers prefetched one layer ahead and reduce-scatters behind, the
/// ring's transfers under its blocks' attention; tp all-reduces, the halo, the all-gathers of K
/// and V, the head all-to-alls and the replicas' all-reduces in the open).
struct StepPrediction {
  double compute = 0;
  double attention_compute = 0;  ///< the part of `compute` spent in attention
  double tensor_parallel = 0;
  double sequence = 0;
  double fsdp = 0;
  double replicas = 0;
  double sequence_transfer = 0;   ///< the sp exchange's transfers before overlap
  double fsdp_transfer = 0;       ///< the FSDP gathers' and reduce-scatters' transfers before overlap
  double ring_step_transfer = 0;  ///< one ring hop (forward), for the warning when it outlasts its block
  double ring_step_compute = 0;   ///< one ring block's attention (forward)
  double turn_taking = 0;         ///< lost to ranks taking turns on a node's cores, where they outnumber them

  [[nodiscard]] double step() const { return compute + turn_taking + tensor_parallel + sequence + fsdp + replicas; }
};

/// Predicts one training step of `shape` under `choice` on `machine`.
StepPrediction predict_step(const ModelShape& shape, const MeshChoice& choice, const MachineModel& machine,
                            const MeshLinks& links);

/// Seconds `machine` computes the given work in, on one rank with a core of its own.
double compute_seconds(const ComputeSpeed& speed, const ComputeWork& work);

}  // namespace meshcomm::advisor
