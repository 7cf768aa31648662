#pragma once

#include <cstddef>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// Bytes one rank sends in one training step, by axis, counted as the reference layers count
/// them (layers/model/communication_volume.hpp): collectives as a ring sends them, attention
/// exchanges what they send.
struct StepBytes {
  std::size_t tensor_parallel = 0;  ///< tp all-reduces, 4 per block
  std::size_t attention = 0;        ///< the sp exchange, forward and backward
  std::size_t fsdp_gather = 0;      ///< parameter all-gathers: the ends once, each block twice
  std::size_t fsdp_reduce = 0;      ///< gradient reduce-scatters, once per unit
  std::size_t replica_reduce = 0;   ///< gradient-shard all-reduces over the replicas (dp, and sp unless folded)

  [[nodiscard]] std::size_t total() const {
    return tensor_parallel + attention + fsdp_gather + fsdp_reduce + replica_reduce;
  }
};

/// The step's bytes on the rank at position `sp_rank` of its sp group (only the halo differs
/// between sp ranks: the last sends nothing to its right). `choice` must be feasible.
StepBytes predict_step_bytes(const ModelShape& shape, const MeshChoice& choice, int sp_rank);

/// The most any rank sends, field by field.
StepBytes predict_step_bytes_max(const ModelShape& shape, const MeshChoice& choice);

/// Ring-equivalent bytes of an all-reduce of `bytes` over `ranks`: 2(P−1)/P·n, rounded down.
std::size_t ring_all_reduce_bytes(std::size_t bytes, int ranks);
/// Ring-equivalent bytes of an all-gather or reduce-scatter of a whole buffer of `bytes`: (P−1)/P·n.
std::size_t ring_gather_bytes(std::size_t bytes, int ranks);

}  // namespace meshcomm::advisor
