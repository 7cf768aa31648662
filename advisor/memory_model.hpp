#pragma once

#include <cstddef>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// Bytes one rank holds at its peak, by kind, as the reference layers account them
/// (TinyTransformer::memory()): FSDP shards, whole layers gathered one ahead, whole gradients
/// waiting for their reduce-scatter, the optimizer, and what the forward pass keeps for the
/// backward pass (no activation checkpointing).
struct MemoryEstimate {
  std::size_t parameter_shards = 0;
  std::size_t gathered_parameters_peak = 0;  ///< two adjacent whole units at once (prefetch)
  std::size_t gradient_shards = 0;
  std::size_t whole_gradients_peak = 0;  ///< two adjacent whole gradients at once
  std::size_t optimizer = 0;             ///< AdamW's two moments in f32, plus an f32 master copy below f32
  std::size_t activations_peak = 0;

  [[nodiscard]] std::size_t peak_total() const {
    return parameter_shards + gathered_parameters_peak + gradient_shards + whole_gradients_peak + optimizer +
           activations_peak;
  }
};

/// The memory of the rank at `sp_rank` of its sp group (only the halo's key rows differ).
MemoryEstimate predict_memory(const ModelShape& shape, const MeshChoice& choice, int sp_rank);

/// The rank that holds the most.
MemoryEstimate predict_memory_max(const ModelShape& shape, const MeshChoice& choice);

/// Bytes the forward pass keeps for one block on `sp_rank` (all its local sequences).
std::size_t block_activation_bytes(const ModelShape& shape, const MeshChoice& choice, int sp_rank);

}  // namespace meshcomm::advisor
