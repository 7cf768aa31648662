#include "device_ring_attention.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <limits>
#include <optional>
#include <vector>

#include "attention/attention_region.hpp"
#include "cuda_support.hpp"
#include "device_block_attention.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::layers {

namespace {

/// Every rank's positions, rank after rank, checking that all hold `rows` rows.
std::vector<std::int64_t> gather_positions(Communicator& ring, std::span<const std::int64_t> positions,
                                           std::size_t shape_rows) {
  if (positions.size() != shape_rows) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("positions has {} entries but shape.rows = {}; give one position per row",
                            positions.size(), shape_rows),
                {.operation = "DeviceRingAttention", .rank = ring.rank()});
  }
  const auto rows = static_cast<std::int64_t>(positions.size());
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ring.size()));
  ring.all_gather(ConstBufferView(&rows, 1, DataType::i64), BufferView(counts)).wait();
  for (int peer = 0; peer < ring.size(); ++peer) {
    if (counts[peer] == rows) continue;
    throw Error(ErrorCode::invalid_argument,
                fmt::format("rank {} holds {} rows but rank {} holds {}; ring attention needs equal shards (pad the "
                            "sequence to a multiple of the ring size)",
                            ring.rank(), rows, peer, counts[peer]),
                {.operation = "DeviceRingAttention", .rank = ring.rank(), .peer = peer});
  }
  std::vector<std::int64_t> all(positions.size() * static_cast<std::size_t>(ring.size()));
  ring.all_gather(ConstBufferView(positions.data(), positions.size(), DataType::i64), BufferView(all)).wait();
  return all;
}

}  // namespace

struct DeviceRingAttention::State {
  State(Communicator& ring_comm, const RingAttentionShape& ring_shape, std::span<const std::int64_t> positions,
        const DeviceRingOptions& ring_options)
      : ring(ring_comm),
        shape(ring_shape),
        options(ring_options),
        stream(static_cast<cudaStream_t>(ring_options.stream.native_handle())),
        host_positions(gather_positions(ring_comm, positions, ring_shape.rows)),
        attention(ring_options.stream, ring_shape.rows, ring_shape.rows, ring_shape.heads, ring_shape.head_dim,
                  ring_options.reserve_sms, ring_options.score_bytes),
        kv(RingPipeline::create(ring_comm, {.block_bytes = 2 * elements() * sizeof(float),
                                            .memory = MemoryKind::cuda,
                                            .transfer = ring_options.transfer})) {
    device_positions = device::allocate<std::int64_t>(host_positions.size(), "cudaMalloc (positions)");
    scratch = device::allocate<float>(2 * elements() + shape.rows * shape.heads, "cudaMalloc (ring attention scratch)");
    device::check(cudaMemcpyAsync(device_positions, host_positions.data(), host_positions.size() * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, stream),
                  "cudaMemcpyAsync (positions)");
    device::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    for (int owner = 0; owner < ring.size(); ++owner) {
      regions.push_back(visible_region(positions_of(ring.rank()), positions_of(owner), shape.causal));
    }
  }

  ~State() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaFree(device_positions);
    (void)cudaFree(scratch);
  }

  [[nodiscard]] std::size_t elements() const noexcept { return shape.rows * shape.heads * shape.head_dim; }

  /// The rank whose block this rank holds at `step` (blocks travel forward).
  [[nodiscard]] int owner_at(int step) const noexcept { return (ring.rank() - step + ring.size()) % ring.size(); }

  std::span<const std::int64_t> positions_of(int rank) const noexcept {
    return std::span(host_positions).subspan(static_cast<std::size_t>(rank) * shape.rows, shape.rows);
  }

  /// This rank's queries against the keys and values of `owner`'s block at `keys`, `values`.
  [[nodiscard]] device::DeviceBlock block(const float* queries, const float* keys, const float* values,
                                          int owner) const {
    return {.queries = queries,
            .query_positions = device_positions + static_cast<std::size_t>(ring.rank()) * shape.rows,
            .keys = keys,
            .values = values,
            .key_positions = device_positions + static_cast<std::size_t>(owner) * shape.rows,
            .heads = shape.heads,
            .head_dim = shape.head_dim,
            .causal = shape.causal,
            .region = regions[static_cast<std::size_t>(owner)]};
  }

  void copy(void* to, const void* from, std::size_t bytes) {
    device::check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  }

  void zero(void* data, std::size_t bytes) { device::check(cudaMemsetAsync(data, 0, bytes, stream), "cudaMemsetAsync"); }

  void start_output(float* out, float* lse) {
    zero(out, elements() * sizeof(float));
    device::fill(lse, shape.rows * shape.heads, -std::numeric_limits<float>::infinity(), options.stream);
  }

  /// Pointers into a K/V block.
  float* keys_in(std::span<std::byte> block) const { return reinterpret_cast<float*>(block.data()); }
  float* values_in(std::span<std::byte> block) const { return keys_in(block) + elements(); }

  Communicator& ring;
  RingAttentionShape shape;
  DeviceRingOptions options;
  cudaStream_t stream;
  std::vector<std::int64_t> host_positions;  // [rank][row]
  std::vector<AttentionRegion> regions;      // per block owner: the part of its block to compute
  std::int64_t* device_positions = nullptr;  // the same on the device
  float* scratch = nullptr;                  // [dK share | dV share | delta]
  device::DeviceBlockAttention attention;
  RingPipeline kv;
  std::optional<RingPipeline> gradients;  // made at the first backward
};

DeviceRingAttention::DeviceRingAttention(Communicator& ring, const RingAttentionShape& shape,
                                         std::span<const std::int64_t> positions, const DeviceRingOptions& options)
    : state_(std::make_unique<State>(ring, shape, positions, options)) {}

DeviceRingAttention::~DeviceRingAttention() = default;

std::size_t DeviceRingAttention::block_bytes() const noexcept { return state_->kv.current().size(); }

void DeviceRingAttention::forward(const float* queries, const float* keys, const float* values, float* out,
                                  float* lse) {
  auto& s = *state_;
  const std::size_t bytes = s.elements() * sizeof(float);
  s.start_output(out, lse);
  s.copy(s.keys_in(s.kv.current()), keys, bytes);
  s.copy(s.values_in(s.kv.current()), values, bytes);
  const int steps = s.ring.size();
  for (int step = 0; step < steps; ++step) {
    const bool more = step + 1 < steps;
    // The next block moves while this one is attended to; the stream orders both.
    if (more) (void)s.kv.start(s.options.stream);
    const auto held = s.kv.current();
    s.attention.forward(s.block(queries, s.keys_in(held), s.values_in(held), s.owner_at(step)), out, lse);
    if (more) s.kv.advance(s.options.stream);
  }
}

void DeviceRingAttention::backward(const float* queries, const float* keys, const float* values, const float* out,
                                   const float* lse, const float* d_out, float* d_queries, float* d_keys,
                                   float* d_values) {
  auto& s = *state_;
  const std::size_t elements = s.elements();
  const std::size_t bytes = elements * sizeof(float);
  if (!s.gradients.has_value()) {
    s.gradients.emplace(RingPipeline::create(
        s.ring, {.block_bytes = 2 * bytes, .memory = MemoryKind::cuda, .transfer = s.options.transfer}));
  }
  auto& gradients = *s.gradients;
  float* share = s.scratch;  // this rank's dK | dV of the block it holds
  float* delta = s.scratch + 2 * elements;
  s.attention.delta(out, d_out, delta, s.shape.rows);
  s.zero(d_queries, bytes);
  s.copy(s.keys_in(s.kv.current()), keys, bytes);
  s.copy(s.values_in(s.kv.current()), values, bytes);
  s.zero(gradients.current().data(), gradients.current().size());
  // K and V move ahead of the compute; each block's dK and dV sums follow one step behind, so
  // after the last step every block's sums are back with its owner.
  const int steps = s.ring.size();
  for (int step = 0; step < steps; ++step) {
    const bool more = step + 1 < steps;
    if (more) (void)s.kv.start(s.options.stream);
    const auto held = s.kv.current();
    s.zero(share, 2 * bytes);
    s.attention.backward(s.block(queries, s.keys_in(held), s.values_in(held), s.owner_at(step)), lse, d_out, delta,
                         d_queries, share, share + elements);
    if (step > 0) gradients.advance(s.options.stream);  // the sums for this block from the previous rank
    device::add_into(reinterpret_cast<float*>(gradients.current().data()), share, 2 * elements, s.options.stream);
    (void)gradients.start(s.options.stream);
    if (more) s.kv.advance(s.options.stream);
  }
  gradients.advance(s.options.stream);
  s.copy(d_keys, gradients.current().data(), bytes);
  s.copy(d_values, gradients.current().data() + bytes, bytes);
}

void DeviceRingAttention::forward_compute_alone(const float* queries, const float* keys, const float* values,
                                                float* out, float* lse) {
  auto& s = *state_;
  s.start_output(out, lse);
  for (int step = 0; step < s.ring.size(); ++step) {
    s.attention.forward(s.block(queries, keys, values, s.owner_at(step)), out, lse);
  }
}

void DeviceRingAttention::forward_transfers_alone() {
  auto& s = *state_;
  for (int step = 0; step + 1 < s.ring.size(); ++step) {
    (void)s.kv.start(s.options.stream);
    s.kv.advance(s.options.stream);
  }
}

}  // namespace meshcomm::layers
