#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "meshcomm/mesh.hpp"
#include "model/communication_volume.hpp"
#include "model/model_config.hpp"

namespace meshcomm::layers {

/// Bytes per rank, for the memory report.
struct MemoryReport {
  std::size_t parameter_shards = 0;       ///< this rank's FSDP shards of every layer
  std::size_t gathered_parameters_peak = 0;  ///< most whole layers held at once (current + prefetched)
  std::size_t gradient_shards = 0;
  std::size_t whole_gradients_peak = 0;   ///< whole-layer gradients waiting for their reduce-scatter
  std::size_t optimizer = 0;              ///< AdamW's two moments of the shards
  std::size_t activations_peak = 0;       ///< what the forward pass keeps for the backward pass

  [[nodiscard]] std::size_t peak_total() const {
    return parameter_shards + gathered_parameters_peak + gradient_shards + whole_gradients_peak + optimizer +
           activations_peak;
  }
};

/// One training step's figures.
struct StepReport {
  float loss = 0;                 ///< mean next-token loss over the global batch, before the update
  double block_seconds = 0;       ///< transformer blocks, forward and backward
  double step_seconds = 0;        ///< the whole step
  double gather_wait_seconds = 0; ///< waiting for layers' parameter all-gathers not yet done (0: fully hidden)
  CommunicationVolume volume;     ///< bytes this rank sent during the step
};

/// The reference model trained on a mesh: tp cuts heads and MLP columns, sp cuts the sequence
/// (attention by the configured exchange), dp × fsdp cut the batch, and every layer's parameters
/// are FSDP-sharded over `config.fsdp_axes`, gathered one layer ahead, gradients reduce-scattered
/// and summed over the replicas, AdamW on the shards. The same seed gives the same losses under
/// every mesh.
class TinyTransformer {
 public:
  /// Collective over the mesh's world: validates `config` against the mesh (errors name the
  /// field), creates the groups and the sharded parameters.
  TinyTransformer(Mesh& mesh, const ModelConfig& config);
  TinyTransformer(TinyTransformer&&) noexcept;
  TinyTransformer& operator=(TinyTransformer&&) noexcept;
  ~TinyTransformer();

  /// Forward, backward and AdamW on the batch of step `step` (synthetic, from the seed).
  StepReport train_step(std::uint64_t step);

  [[nodiscard]] MemoryReport memory() const;
  /// Rows each rank holds of every sequence, and sequences of its batch share.
  [[nodiscard]] std::size_t local_rows() const;
  [[nodiscard]] std::size_t local_sequences() const;
  /// Key rows beyond its own each rank attends over, as a share of its own (the halo, in %).
  [[nodiscard]] double halo_overhead_percent() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace meshcomm::layers
