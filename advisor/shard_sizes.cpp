#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

/// Pairs seen by queries 0 .. n−1: query q sees min(q + 1, window) keys.
std::size_t pairs_before(std::size_t n, std::size_t window) {
  if (window == 0 || n <= window) return n * (n + 1) / 2;
  return window * (window + 1) / 2 + (n - window) * window;
}

}  // namespace

std::size_t block_elements(const ModelShape& shape, int tp) {
  const auto t = static_cast<std::size_t>(tp);
  const std::size_t query = shape.heads / t * shape.head_dim();
  const std::size_t kv = shape.kv_heads / t * shape.head_dim();
  const std::size_t hidden = shape.hidden / t;
  return 2 * shape.width + 2 * query * shape.width + 2 * kv * shape.width + 2 * hidden * shape.width;
}

std::size_t visible_pairs(std::size_t first, std::size_t last, std::size_t window) {
  return pairs_before(last, window) - pairs_before(first, window);
}

ShardSizes shard_sizes(const ModelShape& shape, const MeshChoice& choice) {
  const auto tp = static_cast<std::size_t>(choice.tp);
  ShardSizes sizes{.sequences = shape.batch / static_cast<std::size_t>(choice.data_ranks()),
                   .shard_rows = shape.sequence / static_cast<std::size_t>(choice.sp),
                   .query_heads = shape.heads / tp,
                   .kv_heads = shape.kv_heads / tp,
                   .head_dim = shape.head_dim(),
                   .hidden = shape.hidden / tp,
                   .window_rows = shape.sliding() ? shape.window - 1 : 0};
  sizes.rows = sizes.sequences * sizes.shard_rows;
  if (shape.vocab > 0) sizes.unit_elements.push_back(shape.vocab * shape.width);
  for (std::size_t layer = 0; layer < shape.layers; ++layer)
    sizes.unit_elements.push_back(block_elements(shape, choice.tp));
  if (shape.vocab > 0) sizes.unit_elements.push_back(shape.width + shape.vocab * shape.width);
  const auto shard = static_cast<std::size_t>(choice.shard_ranks());
  for (std::size_t elements : sizes.unit_elements) sizes.unit_padded.push_back((elements + shard - 1) / shard * shard);
  return sizes;
}

}  // namespace meshcomm::advisor
