#pragma once

#include <cstddef>
#include <vector>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// What one rank holds of the model under a mesh choice: the arithmetic every prediction shares.
struct ShardSizes {
  std::size_t sequences = 0;    ///< local batch: batch / (dp·fsdp)
  std::size_t shard_rows = 0;   ///< rows of each sequence on this rank: sequence / sp
  std::size_t rows = 0;         ///< sequences × shard_rows
  std::size_t query_heads = 0;  ///< heads / tp
  std::size_t kv_heads = 0;     ///< kv_heads / tp
  std::size_t head_dim = 0;
  std::size_t hidden = 0;       ///< MLP columns on this rank: hidden / tp
  std::size_t window_rows = 0;  ///< the halo's left width: window − 1 (0 for full attention)
  /// Elements of each FSDP unit's flat parameter on this tp rank, in order (embedding, blocks,
  /// output; no ends when vocab is 0), and the same rounded up to a multiple of the shard group.
  std::vector<std::size_t> unit_elements, unit_padded;

  [[nodiscard]] std::size_t query_width() const { return query_heads * head_dim; }
  [[nodiscard]] std::size_t kv_width() const { return kv_heads * head_dim; }
};

/// The sizes for `choice`, which must be feasible (see infeasibility()).
ShardSizes shard_sizes(const ModelShape& shape, const MeshChoice& choice);

/// Elements of one block's flat parameter on a tp rank (norms, Q, K, V, output, MLP in and out).
std::size_t block_elements(const ModelShape& shape, int tp);

/// Causal (query, key) pairs that query rows [first, last) see under a window (0: full).
std::size_t visible_pairs(std::size_t first, std::size_t last, std::size_t window);

}  // namespace meshcomm::advisor
