#pragma once

#include <cstddef>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/work.hpp"
#include "model/communication_volume.hpp"
#include "model/model_config.hpp"
#include "model/parameter_layout.hpp"

namespace meshcomm::layers {

/// Bytes held now and at most, for one kind of buffer.
struct MemoryGauge {
  std::size_t now = 0;
  std::size_t peak = 0;
  void add(std::size_t bytes) {
    now += bytes;
    if (now > peak) peak = now;
  }
  void remove(std::size_t bytes) { now -= bytes; }
};

/// The groups and gauges every unit of one model shares.
struct FsdpGroups {
  Communicator& shard;     ///< parameters are split over these ranks
  Communicator* replicas;  ///< ranks that hold the same shard (null: none); gradients are summed over them
  CommunicationVolume& volume;
  MemoryGauge& gathered_parameters;
  MemoryGauge& full_gradients;
};

/// One layer's flat parameter sharded over a group (FSDP's FlatParameter): this rank keeps only
/// its shard, its gradient and its AdamW moments; the whole parameter exists only between
/// `start_gather` and `release`, the whole gradient only until `finish_reduce`.
class FsdpUnit {
 public:
  /// `initial` is this tp rank's whole flat parameter; the unit keeps its shard of it.
  FsdpUnit(ParameterLayout layout, const std::vector<float>& initial, const FsdpGroups& groups);

  [[nodiscard]] const ParameterLayout& layout() const noexcept { return layout_; }

  /// Starts the all-gather of the whole parameter (returns at once, so it overlaps compute).
  void start_gather();
  /// Waits for the all-gather; the whole parameter, valid until `release`.
  [[nodiscard]] const float* wait_gather();
  /// Frees the whole parameter.
  void release();

  /// The whole-parameter gradient to add to (zeroed when first asked for in a step).
  [[nodiscard]] float* gradient();
  /// Starts the reduce-scatter of the gradient to the shards.
  void start_reduce();
  /// Waits for it, sums over the replicas, frees the whole gradient (once per start_reduce).
  void finish_reduce();
  /// Tests the gather and the reduction in flight, so they advance while the caller computes.
  void progress();
  /// AdamW on the shard with its reduced gradient.
  void step(const AdamWConfig& config, std::size_t step);

  /// Bytes of this rank's parameter shard, gradient shard and optimizer moments.
  [[nodiscard]] std::size_t shard_bytes() const noexcept { return shard_.size() * sizeof(float); }
  [[nodiscard]] std::size_t optimizer_bytes() const noexcept { return 2 * shard_bytes(); }
  /// The whole parameter, gathered now (for tests and checkpoints): collective over the shard group.
  [[nodiscard]] std::vector<float> gather_now();

 private:
  [[nodiscard]] std::size_t padded_bytes() const noexcept { return padded_ * sizeof(float); }

  ParameterLayout layout_;
  FsdpGroups groups_;
  std::size_t padded_ = 0;  ///< whole parameter rounded up to a multiple of the shard group
  std::vector<float> shard_, gradient_shard_, first_moment_, second_moment_, decay_mask_;
  std::vector<float> whole_, whole_gradient_;
  Work gather_, reduce_;
  bool reduce_pending_ = false;
};

}  // namespace meshcomm::layers
