#include "compute_model.hpp"

#include <algorithm>

#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

/// Visible pairs and visited pairs of one sequence on the busiest rank, per head of its share.
struct Pairs {
  double visible = 0;
  double visited = 0;
  double heads = 0;  ///< heads they are computed for
};

Pairs attention_pairs(const ModelShape& shape, const MeshChoice& choice, const ShardSizes& sizes) {
  const auto ranks = static_cast<std::size_t>(choice.sp);
  const std::size_t rows = sizes.shard_rows;
  const std::size_t window = shape.window;
  switch (choice.exchange) {
    case SequenceExchange::ring:
    case SequenceExchange::all_gather_kv: {
      // Zigzag: chunks r and 2P − 1 − r balance the causal work; each rank visits its rows against all.
      const std::size_t chunk = rows / 2;
      const double visible = static_cast<double>(visible_pairs(0, chunk, window) +
                                                 visible_pairs((2 * ranks - 1) * chunk, 2 * ranks * chunk, window));
      return {visible, static_cast<double>(rows) * static_cast<double>(shape.sequence),
              static_cast<double>(sizes.query_heads)};
    }
    case SequenceExchange::halo: {
      const std::size_t first = (ranks - 1) * rows;  // the last rank has a whole window for every row
      const std::size_t keys = rows + std::min(sizes.window_rows, first);
      return {static_cast<double>(visible_pairs(first, first + rows, window)),
              static_cast<double>(rows) * static_cast<double>(keys), static_cast<double>(sizes.query_heads)};
    }
    case SequenceExchange::head_all_to_all: {
      const std::size_t all = shape.sequence;
      return {static_cast<double>(visible_pairs(0, all, window)), static_cast<double>(all) * static_cast<double>(all),
              static_cast<double>(sizes.query_heads / ranks)};
    }
  }
  return {};
}

}  // namespace

ComputeWork block_work(const ModelShape& shape, const MeshChoice& choice) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const double rows = static_cast<double>(sizes.rows);
  const double width = static_cast<double>(shape.width);
  const double forward_gemm =
      2.0 * rows * width * static_cast<double>(2 * sizes.query_width() + 2 * sizes.kv_width() + 2 * sizes.hidden);
  const Pairs pairs = attention_pairs(shape, choice, sizes);
  const double sequences = static_cast<double>(sizes.sequences);
  return {.gemm_flops = 3.0 * forward_gemm,
          .attention_flops = 14.0 * sequences * pairs.visible * pairs.heads * static_cast<double>(sizes.head_dim),
          .attention_pairs = 2.0 * sequences * pairs.visible * pairs.heads,
          .attention_scans = 2.0 * sequences * pairs.visited * pairs.heads,
          .activations = rows * static_cast<double>(sizes.hidden)};
}

EndsWork ends_work(const ModelShape& shape, const MeshChoice& choice) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const double rows = static_cast<double>(sizes.rows);
  double shard_elements = 0;
  for (std::size_t padded : sizes.unit_padded)
    shard_elements += static_cast<double>(padded / static_cast<std::size_t>(choice.shard_ranks()));
  const double vocab = static_cast<double>(shape.vocab);
  // AdamW reads and writes the shard, its gradient and two moments.
  const double optimizer_bytes = 8.0 * shard_elements * static_cast<double>(shape.element_bytes);
  return {.gemm_flops = 6.0 * rows * static_cast<double>(shape.width) * vocab,
          .activations = rows * vocab,
          .optimizer_bytes = optimizer_bytes};
}

}  // namespace meshcomm::advisor
