#include "ring_attention.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

#include "block_attention.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::layers {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A block on the ring: [positions (int64) | K | V], or just [dK | dV] for gradients.
struct BlockView {
  std::int64_t* positions;
  float* keys;
  float* values;
};

BlockView view_kv(std::span<std::byte> block, std::size_t rows, std::size_t row_elements) {
  auto* positions = reinterpret_cast<std::int64_t*>(block.data());
  auto* keys = reinterpret_cast<float*>(block.data() + rows * sizeof(std::int64_t));
  return {positions, keys, keys + rows * row_elements};
}

std::size_t kv_bytes(std::size_t rows, std::size_t row_elements) {
  return rows * sizeof(std::int64_t) + 2 * rows * row_elements * sizeof(float);
}

void pack_kv(std::span<std::byte> block, const float* keys, const float* values, const std::int64_t* positions,
             std::size_t rows, std::size_t row_elements) {
  auto view = view_kv(block, rows, row_elements);
  std::copy_n(positions, rows, view.positions);
  std::copy_n(keys, rows * row_elements, view.keys);
  std::copy_n(values, rows * row_elements, view.values);
}

}  // namespace

RingAttention::RingAttention(Communicator& ring, const RingAttentionShape& shape)
    : ring_(ring),
      shape_(shape),
      kv_(RingPipeline::create(ring, {.block_bytes = kv_bytes(shape.rows, shape.heads * shape.head_dim)})) {}

void RingAttention::forward(const float* queries, const float* keys, const float* values,
                            const std::int64_t* positions, float* out, float* lse, RingAttentionTimes* times) {
  const auto& shape = shape_;
  const std::size_t row = shape.heads * shape.head_dim;
  const int steps = ring_.size();
  std::fill(out, out + shape.rows * row, 0.0F);
  std::fill(lse, lse + shape.rows * shape.heads, -std::numeric_limits<float>::infinity());
  pack_kv(kv_.current(), keys, values, positions, shape.rows, row);
  const BlockShape block{shape.rows, shape.rows, shape.heads, shape.head_dim, shape.causal};
  for (int step = 0; step < steps; ++step) {
    const bool more = step + 1 < steps;
    Work transfer = more ? kv_.start() : Work();
    const auto computing = Clock::now();
    const auto kv = view_kv(kv_.current(), shape.rows, row);
    block_attention_forward(queries, positions, kv.keys, kv.values, kv.positions, out, lse, block);
    if (times != nullptr) times->compute_seconds += seconds_since(computing);
    const auto waiting = Clock::now();
    transfer.wait();
    if (times != nullptr) times->wait_seconds += seconds_since(waiting);
    if (more) kv_.advance();
  }
}

void RingAttention::backward(const float* queries, const float* keys, const float* values,
                             const std::int64_t* positions, const float* out, const float* lse, const float* d_out,
                             float* d_queries, float* d_keys, float* d_values, RingAttentionTimes* times) {
  const auto& shape = shape_;
  const std::size_t row = shape.heads * shape.head_dim;
  const std::size_t elements = shape.rows * row;
  const int steps = ring_.size();
  if (!gradients_.has_value()) {
    gradients_.emplace(RingPipeline::create(ring_, {.block_bytes = 2 * elements * sizeof(float)}));
  }
  auto& grads = *gradients_;
  delta_.resize(shape.rows * shape.heads);
  share_.resize(2 * elements);
  attention_delta(out, d_out, delta_.data(), shape.rows, shape.heads, shape.head_dim);
  std::fill(d_queries, d_queries + elements, 0.0F);
  // K and V move ahead of the compute; the gradients of each block follow it one step behind:
  // at step s a rank adds its share to the sums that arrived for the block it holds, then sends
  // them on, so after the last step each block's sums reach its owner.
  pack_kv(kv_.current(), keys, values, positions, shape.rows, row);
  std::memset(grads.current().data(), 0, grads.current().size());
  const BlockShape block{shape.rows, shape.rows, shape.heads, shape.head_dim, shape.causal};
  Work grads_in_flight;
  for (int step = 0; step < steps; ++step) {
    const bool more = step + 1 < steps;
    Work kv_transfer = more ? kv_.start() : Work();
    const auto computing = Clock::now();
    std::fill(share_.begin(), share_.end(), 0.0F);
    const auto visiting = view_kv(kv_.current(), shape.rows, row);
    block_attention_backward(queries, positions, visiting.keys, visiting.values, visiting.positions, lse, d_out,
                             delta_.data(), d_queries, share_.data(), share_.data() + elements, block);
    if (times != nullptr) times->compute_seconds += seconds_since(computing);
    const auto waiting = Clock::now();
    if (step > 0) {
      grads_in_flight.wait();  // the sums for this block from the previous rank
      grads.advance();
    }
    auto* sums = reinterpret_cast<float*>(grads.current().data());
    for (std::size_t i = 0; i < 2 * elements; ++i) sums[i] += share_[i];
    grads_in_flight = grads.start();
    kv_transfer.wait();
    if (more) kv_.advance();
    if (times != nullptr) times->wait_seconds += seconds_since(waiting);
  }
  grads_in_flight.wait();
  grads.advance();
  const auto* mine = reinterpret_cast<const float*>(grads.current().data());
  std::copy_n(mine, elements, d_keys);
  std::copy_n(mine + elements, elements, d_values);
}

void ring_attention_forward(Communicator& ring, const float* queries, const float* keys, const float* values,
                            const std::int64_t* positions, float* out, float* lse, const RingAttentionShape& shape,
                            RingAttentionTimes* times) {
  RingAttention(ring, shape).forward(queries, keys, values, positions, out, lse, times);
}

void ring_attention_backward(Communicator& ring, const float* queries, const float* keys, const float* values,
                             const std::int64_t* positions, const float* out, const float* lse, const float* d_out,
                             float* d_queries, float* d_keys, float* d_values, const RingAttentionShape& shape,
                             RingAttentionTimes* times) {
  RingAttention(ring, shape).backward(queries, keys, values, positions, out, lse, d_out, d_queries, d_keys, d_values,
                                      times);
}

}  // namespace meshcomm::layers
