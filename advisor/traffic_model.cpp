#include "traffic_model.hpp"

#include <algorithm>
#include <cstdint>

#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

/// Bytes of one sequence's attention exchange, forward plus backward, on sp rank `sp_rank`.
std::size_t exchange_bytes(const MeshChoice& choice, const ShardSizes& sizes, std::size_t element_bytes, int sp_rank) {
  const auto ranks = static_cast<std::size_t>(choice.sp);
  if (ranks == 1) return 0;
  const std::size_t rows = sizes.shard_rows;
  const std::size_t kv_row = 2 * sizes.kv_width() * element_bytes;  // K and V of one row
  switch (choice.exchange) {
    case SequenceExchange::ring: {
      // Forward: K, V and positions go round P − 1 times; backward: again, and dK, dV a full circle.
      const std::size_t block = rows * sizeof(std::int64_t) + rows * kv_row;
      return 2 * (ranks - 1) * block + ranks * rows * kv_row;
    }
    case SequenceExchange::all_gather_kv:
      return 2 * rows * kv_row * (ranks - 1);
    case SequenceExchange::halo: {
      // This rank's rows within the window of the ranks to its right; the adjoint counts the same.
      const std::size_t right_rows = (ranks - 1 - static_cast<std::size_t>(sp_rank)) * rows;
      return 2 * std::min(sizes.window_rows, right_rows) * kv_row;
    }
    case SequenceExchange::head_all_to_all: {
      // Q, K, V in and the output back; backward dOut in and dQ, dK, dV back: each keeps 1/P.
      const std::size_t query_part = rows * (sizes.query_heads / ranks) * sizes.head_dim * element_bytes;
      const std::size_t kv_part = rows * (sizes.kv_heads / ranks) * sizes.head_dim * element_bytes;
      return 2 * (ranks - 1) * (2 * query_part + 2 * kv_part);
    }
  }
  return 0;
}

}  // namespace

std::size_t ring_all_reduce_bytes(std::size_t bytes, int ranks) {
  return ranks <= 1 ? 0 : 2 * bytes * static_cast<std::size_t>(ranks - 1) / static_cast<std::size_t>(ranks);
}

std::size_t ring_gather_bytes(std::size_t bytes, int ranks) {
  return ranks <= 1 ? 0 : bytes * static_cast<std::size_t>(ranks - 1) / static_cast<std::size_t>(ranks);
}

StepBytes predict_step_bytes(const ModelShape& shape, const MeshChoice& choice, int sp_rank) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const std::size_t element = shape.element_bytes;
  StepBytes bytes;
  // Two all-reduces forward (after each row-parallel projection), two backward.
  bytes.tensor_parallel = shape.layers * 4 * ring_all_reduce_bytes(sizes.rows * shape.width * element, choice.tp);
  bytes.attention = shape.layers * sizes.sequences * exchange_bytes(choice, sizes, element, sp_rank);
  const bool has_ends = shape.vocab > 0;
  for (std::size_t unit = 0; unit < sizes.unit_padded.size(); ++unit) {
    const bool is_end = has_ends && (unit == 0 || unit + 1 == sizes.unit_padded.size());
    const std::size_t whole = sizes.unit_padded[unit] * element;
    // Blocks are gathered again for the backward pass; the ends are used once.
    bytes.fsdp_gather += (is_end ? 1 : 2) * ring_gather_bytes(whole, choice.shard_ranks());
    bytes.fsdp_reduce += ring_gather_bytes(whole, choice.shard_ranks());
    bytes.replica_reduce +=
        ring_all_reduce_bytes(whole / static_cast<std::size_t>(choice.shard_ranks()), choice.replica_ranks());
  }
  return bytes;
}

StepBytes predict_step_bytes_max(const ModelShape& shape, const MeshChoice& choice) {
  StepBytes most;
  for (int rank = 0; rank < choice.sp; ++rank) {
    const StepBytes bytes = predict_step_bytes(shape, choice, rank);
    most.tensor_parallel = std::max(most.tensor_parallel, bytes.tensor_parallel);
    most.attention = std::max(most.attention, bytes.attention);
    most.fsdp_gather = std::max(most.fsdp_gather, bytes.fsdp_gather);
    most.fsdp_reduce = std::max(most.fsdp_reduce, bytes.fsdp_reduce);
    most.replica_reduce = std::max(most.replica_reduce, bytes.replica_reduce);
    if (choice.exchange != SequenceExchange::halo) break;  // the same on every sp rank
  }
  return most;
}

}  // namespace meshcomm::advisor
