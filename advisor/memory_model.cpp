#include "memory_model.hpp"

#include <algorithm>

#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

/// Elements one sequence's attention keeps for the backward pass, by exchange.
std::size_t attention_saved_elements(const MeshChoice& choice, const ShardSizes& sizes, int sp_rank) {
  const auto ranks = static_cast<std::size_t>(choice.sp);
  const std::size_t rows = sizes.shard_rows;
  const std::size_t lse = rows * sizes.query_heads;
  switch (choice.exchange) {
    case SequenceExchange::ring:
      return lse;
    case SequenceExchange::all_gather_kv:
      return lse + 2 * rows * ranks * sizes.kv_width();
    case SequenceExchange::halo: {
      // Its own rows and the halo's, less the rows before the sequence's start.
      const std::size_t key_rows = rows + std::min(sizes.window_rows, static_cast<std::size_t>(sp_rank) * rows);
      return lse + 2 * key_rows * sizes.kv_width();
    }
    case SequenceExchange::head_all_to_all: {
      // The whole sequence for heads / P heads: Q, K, V, the output and the log-sum-exp.
      const std::size_t all_rows = rows * ranks;
      const std::size_t query_heads = sizes.query_heads / ranks;
      const std::size_t kv_heads = sizes.kv_heads / ranks;
      return all_rows * (2 * query_heads * sizes.head_dim + 2 * kv_heads * sizes.head_dim + query_heads);
    }
  }
  return 0;
}

/// The largest sum of two neighbouring units (one in use, the next prefetched or reducing).
std::size_t adjacent_pair_peak(const std::vector<std::size_t>& units) {
  if (units.size() == 1) return units.front();
  std::size_t peak = 0;
  for (std::size_t i = 0; i + 1 < units.size(); ++i) peak = std::max(peak, units[i] + units[i + 1]);
  return peak;
}

}  // namespace

std::size_t block_activation_bytes(const ModelShape& shape, const MeshChoice& choice, int sp_rank) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const std::size_t rows = sizes.rows;
  // x, normed, mid, mid_normed; Q, attended; K, V; hidden, activated; two norms' inverse RMS.
  const std::size_t block =
      rows * (4 * shape.width + 2 * sizes.query_width() + 2 * sizes.kv_width() + 2 * sizes.hidden + 2);
  return (block + sizes.sequences * attention_saved_elements(choice, sizes, sp_rank)) * shape.element_bytes;
}

MemoryEstimate predict_memory(const ModelShape& shape, const MeshChoice& choice, int sp_rank) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const std::size_t element = shape.element_bytes;
  const auto shard_ranks = static_cast<std::size_t>(choice.shard_ranks());
  MemoryEstimate memory;
  std::size_t shard_elements = 0;
  for (std::size_t padded : sizes.unit_padded) shard_elements += padded / shard_ranks;
  memory.parameter_shards = shard_elements * element;
  memory.gradient_shards = shard_elements * element;
  memory.optimizer = shard_elements * (2 * 4 + (element < 4 ? 4 : 0));
  memory.gathered_parameters_peak = adjacent_pair_peak(sizes.unit_padded) * element;
  memory.whole_gradients_peak = memory.gathered_parameters_peak;
  memory.activations_peak = shape.layers * block_activation_bytes(shape, choice, sp_rank);
  return memory;
}

MemoryEstimate predict_memory_max(const ModelShape& shape, const MeshChoice& choice) {
  // Halo ranks further right keep more key rows; every other exchange is the same on all ranks.
  const int rank = choice.exchange == SequenceExchange::halo ? choice.sp - 1 : 0;
  return predict_memory(shape, choice, rank);
}

}  // namespace meshcomm::advisor
