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

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// A block on the ring: [positions (int64) | K | V], or just [dK | dV] for gradients.
template <class T>
struct BlockView {
  std::int64_t* positions;
  T* keys;
  T* values;
};

template <class T>
BlockView<T> view_kv(std::span<std::byte> block, std::size_t rows, std::size_t row_elements) {
  auto* positions = reinterpret_cast<std::int64_t*>(block.data());
  auto* keys = reinterpret_cast<T*>(block.data() + rows * sizeof(std::int64_t));
  return {positions, keys, keys + rows * row_elements};
}

template <class T>
std::size_t kv_bytes(std::size_t rows, std::size_t row_elements) {
  return rows * sizeof(std::int64_t) + 2 * rows * row_elements * sizeof(T);
}

template <class T>
void pack_kv(std::span<std::byte> block, const T* keys, const T* values, const std::int64_t* positions,
             std::size_t rows, std::size_t row_elements) {
  auto view = view_kv<T>(block, rows, row_elements);
  std::copy_n(positions, rows, view.positions);
  std::copy_n(keys, rows * row_elements, view.keys);
  std::copy_n(values, rows * row_elements, view.values);
}

}  // namespace

template <class T>
RingAttention<T>::RingAttention(Communicator& ring, const RingAttentionShape& shape)
    : ring_(ring),
      shape_(shape),
      kv_(RingPipeline::create(ring, {.block_bytes = kv_bytes<T>(shape.rows, shape.heads * shape.head_dim)})) {}

template <class T>
void RingAttention<T>::forward(const T* queries, const T* keys, const T* values, const std::int64_t* positions, T* out,
                               T* lse, RingAttentionTimes* times) {
  const auto& shape = shape_;
  const std::size_t row = shape.heads * shape.head_dim;
  const int steps = ring_.size();
  std::fill(out, out + shape.rows * row, T{0});
  std::fill(lse, lse + shape.rows * shape.heads, -std::numeric_limits<T>::infinity());
  pack_kv(kv_.current(), keys, values, positions, shape.rows, row);
  const BlockShape block{shape.rows, shape.rows, shape.heads, shape.head_dim, shape.causal};
  for (int step = 0; step < steps; ++step) {
    const bool more = step + 1 < steps;
    Work transfer = more ? kv_.start() : Work();
    const auto computing = Clock::now();
    const auto kv = view_kv<T>(kv_.current(), shape.rows, row);
    block_attention_forward(queries, positions, kv.keys, kv.values, kv.positions, out, lse, block);
    if (times != nullptr) times->compute_seconds += seconds_since(computing);
    const auto waiting = Clock::now();
    transfer.wait();
    if (times != nullptr) times->wait_seconds += seconds_since(waiting);
    if (more) kv_.advance();
  }
}

template <class T>
void RingAttention<T>::backward(const T* queries, const T* keys, const T* values, const std::int64_t* positions,
                                const T* out, const T* lse, const T* d_out, T* d_queries, T* d_keys, T* d_values,
                                RingAttentionTimes* times) {
  const auto& shape = shape_;
  const std::size_t row = shape.heads * shape.head_dim;
  const std::size_t elements = shape.rows * row;
  const int steps = ring_.size();
  if (!gradients_.has_value()) {
    gradients_.emplace(RingPipeline::create(ring_, {.block_bytes = 2 * elements * sizeof(T)}));
  }
  auto& grads = *gradients_;
  delta_.resize(shape.rows * shape.heads);
  share_.resize(2 * elements);
  attention_delta(out, d_out, delta_.data(), shape.rows, shape.heads, shape.head_dim);
  std::fill(d_queries, d_queries + elements, T{0});
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
    std::fill(share_.begin(), share_.end(), T{0});
    const auto visiting = view_kv<T>(kv_.current(), shape.rows, row);
    block_attention_backward(queries, positions, visiting.keys, visiting.values, visiting.positions, lse, d_out,
                             delta_.data(), d_queries, share_.data(), share_.data() + elements, block);
    if (times != nullptr) times->compute_seconds += seconds_since(computing);
    const auto waiting = Clock::now();
    if (step > 0) {
      grads_in_flight.wait();  // the sums for this block from the previous rank
      grads.advance();
    }
    auto* sums = reinterpret_cast<T*>(grads.current().data());
    for (std::size_t i = 0; i < 2 * elements; ++i) sums[i] += share_[i];
    grads_in_flight = grads.start();
    kv_transfer.wait();
    if (more) kv_.advance();
    if (times != nullptr) times->wait_seconds += seconds_since(waiting);
  }
  grads_in_flight.wait();
  grads.advance();
  const auto* mine = reinterpret_cast<const T*>(grads.current().data());
  std::copy_n(mine, elements, d_keys);
  std::copy_n(mine + elements, elements, d_values);
}

template <class T>
void ring_attention_forward(Communicator& ring, const T* queries, const T* keys, const T* values,
                            const std::int64_t* positions, T* out, T* lse, const RingAttentionShape& shape,
                            RingAttentionTimes* times) {
  RingAttention<T>(ring, shape).forward(queries, keys, values, positions, out, lse, times);
}

template <class T>
void ring_attention_backward(Communicator& ring, const T* queries, const T* keys, const T* values,
                             const std::int64_t* positions, const T* out, const T* lse, const T* d_out, T* d_queries,
                             T* d_keys, T* d_values, const RingAttentionShape& shape, RingAttentionTimes* times) {
  RingAttention<T>(ring, shape)
      .backward(queries, keys, values, positions, out, lse, d_out, d_queries, d_keys, d_values, times);
}

template class RingAttention<float>;
template class RingAttention<double>;
template void ring_attention_forward<float>(Communicator&, const float*, const float*, const float*,
                                            const std::int64_t*, float*, float*, const RingAttentionShape&,
                                            RingAttentionTimes*);
template void ring_attention_forward<double>(Communicator&, const double*, const double*, const double*,
                                             const std::int64_t*, double*, double*, const RingAttentionShape&,
                                             RingAttentionTimes*);
template void ring_attention_backward<float>(Communicator&, const float*, const float*, const float*,
                                             const std::int64_t*, const float*, const float*, const float*, float*,
                                             float*, float*, const RingAttentionShape&, RingAttentionTimes*);
template void ring_attention_backward<double>(Communicator&, const double*, const double*, const double*,
                                              const std::int64_t*, const double*, const double*, const double*, double*,
                                              double*, double*, const RingAttentionShape&, RingAttentionTimes*);

}  // namespace meshcomm::layers
