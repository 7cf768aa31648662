#include "meshcomm/head_transpose.hpp"

#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "communicator_impl.hpp"
#include "device/device_runtime.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "plain_copy.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm {

namespace detail {

/// The state behind a HeadTranspose: element counts and offsets of every block.
class HeadTransposeImpl {
 public:
  HeadTransposeImpl(Communicator& comm, const HeadTransposeSpec& spec) : comm_(comm), spec_(spec) {
    const auto size = static_cast<std::size_t>(comm.size());
    local_heads_ = spec.heads / size;
    starts_.resize(size);
    std::exclusive_scan(spec.shard_rows.begin(), spec.shard_rows.end(), starts_.begin(), std::size_t{0});
    total_rows_ = std::accumulate(spec.shard_rows.begin(), spec.shard_rows.end(), std::size_t{0});
    const std::size_t block = local_heads_ * spec.head_dim;  // elements per row of one rank's heads
    const std::size_t own = spec.shard_rows[comm.rank()];
    for (std::size_t peer = 0; peer < size; ++peer) {
      // Sequence side: this rank's rows of peer's heads, packed peer by peer.
      packed_counts_.push_back(own * block);
      packed_offsets_.push_back(peer * own * block);
      // Head side: peer's rows of this rank's heads, at their place in the whole sequence.
      head_counts_.push_back(spec.shard_rows[peer] * block);
      head_offsets_.push_back(starts_[peer] * block);
    }
    if (spec.memory == MemoryKind::cuda) device_packed_ = comm.impl().scratch().acquire(packed_bytes(), spec.memory);
  }

  Work to_heads(const void* sequence, void* heads, StreamRef stream) {
    auto packed = packing_buffer();
    shuffle(static_cast<const std::byte*>(sequence), packed.get(), true, stream);
    auto work = comm_.all_to_allv(
        ConstBufferView(packed.get(), packed_elements(), spec_.type, spec_.memory),
        BufferView(heads, total_rows_ * local_heads_ * spec_.head_dim, spec_.type, spec_.memory),
        {packed_counts_, packed_offsets_, head_counts_, head_offsets_}, {.stream = stream});
    return keep_alive(std::move(work), std::move(packed), nullptr);
  }

  Work to_sequence(const void* heads, void* sequence, StreamRef stream) {
    auto packed = packing_buffer();
    auto work = comm_.all_to_allv(
        ConstBufferView(heads, total_rows_ * local_heads_ * spec_.head_dim, spec_.type, spec_.memory),
        BufferView(packed.get(), packed_elements(), spec_.type, spec_.memory),
        {head_counts_, head_offsets_, packed_counts_, packed_offsets_}, {.stream = stream});
    auto* out = static_cast<std::byte*>(sequence);
    if (spec_.memory == MemoryKind::cuda && comm_.impl().backend().stream_ordered()) {
      // The exchange is queued on the stream: the unshuffle follows it there.
      shuffle(packed.get(), out, false, stream);
      return keep_alive(std::move(work), std::move(packed), nullptr);
    }
    auto* self = this;
    return keep_alive(std::move(work), packed, [self, packed, out, stream] {
      self->shuffle(packed.get(), out, false, stream);
      if (self->spec_.memory == MemoryKind::cuda) device::synchronize(stream);
    });
  }

  [[nodiscard]] std::size_t sequence_rows() const noexcept { return total_rows_; }
  [[nodiscard]] std::size_t local_heads() const noexcept { return local_heads_; }
  [[nodiscard]] std::size_t bytes_sent() const noexcept {
    const auto own = spec_.shard_rows[comm_.rank()];
    return (static_cast<std::size_t>(comm_.size()) - 1) * own * local_heads_ * spec_.head_dim * size_of(spec_.type);
  }

 private:
  [[nodiscard]] std::size_t packed_elements() const noexcept {
    return spec_.shard_rows[comm_.rank()] * spec_.heads * spec_.head_dim;
  }
  [[nodiscard]] std::size_t packed_bytes() const noexcept { return packed_elements() * size_of(spec_.type); }

  /// Host memory: a scratch block per call (several calls may be in flight); CUDA memory: the
  /// plan's own buffer, ordered by the stream.
  std::shared_ptr<std::byte[]> packing_buffer() {
    return spec_.memory == MemoryKind::cuda ? device_packed_ : comm_.impl().scratch().acquire(packed_bytes());
  }

  /// Between [rows, heads, dim] (`sequence`) and the packed [peer, rows, local heads, dim]; on
  /// CUDA memory queued on `stream` as one strided copy per peer.
  void shuffle(const std::byte* from, std::byte* to, bool to_packed, StreamRef stream) const {
    const std::size_t rows = spec_.shard_rows[comm_.rank()];
    const std::size_t chunk = local_heads_ * spec_.head_dim * size_of(spec_.type);  // one row of one peer's heads
    const auto peers = static_cast<std::size_t>(comm_.size());
    if (spec_.memory == MemoryKind::cuda) {
      for (std::size_t peer = 0; peer < peers; ++peer) {
        if (to_packed) {
          device::copy_2d(to + peer * rows * chunk, chunk, from + peer * chunk, peers * chunk, chunk, rows, stream);
        } else {
          device::copy_2d(to + peer * chunk, peers * chunk, from + peer * rows * chunk, chunk, chunk, rows, stream);
        }
      }
      return;
    }
    for (std::size_t peer = 0; peer < peers; ++peer) {
      for (std::size_t row = 0; row < rows; ++row) {
        const std::size_t sequence_at = (row * peers + peer) * chunk;
        const std::size_t packed_at = (peer * rows + row) * chunk;
        if (to_packed) {
          plain_copy(to + packed_at, from + sequence_at, chunk);
        } else {
          plain_copy(to + sequence_at, from + packed_at, chunk);
        }
      }
    }
  }

  /// A Work that holds `scratch` until the exchange is done, then runs `after`.
  Work keep_alive(Work exchange, std::shared_ptr<std::byte[]> scratch, std::function<void()> after) {
    auto inner = std::make_shared<WorkList>();
    inner->push_back(std::move(exchange));
    return comm_.impl().make_work(make_schedule(
        2, [inner, scratch = std::move(scratch), after = std::move(after)](int step) {
          if (step == 0) return std::move(*inner);
          if (after) after();
          return WorkList{};
        }));
  }

  Communicator& comm_;
  HeadTransposeSpec spec_;
  std::size_t local_heads_ = 0;
  std::size_t total_rows_ = 0;
  std::vector<std::size_t> starts_;
  std::vector<std::size_t> packed_counts_, packed_offsets_, head_counts_, head_offsets_;
  std::shared_ptr<std::byte[]> device_packed_;  // CUDA memory: the packing buffer
};

}  // namespace detail

HeadTranspose HeadTranspose::create(Communicator& comm, const HeadTransposeSpec& spec) {
  auto fail = [](const std::string& message) {
    return Error(ErrorCode::invalid_argument, message, {.operation = "HeadTranspose::create"});
  };
  if (spec.shard_rows.size() != static_cast<std::size_t>(comm.size())) {
    throw fail(fmt::format("shard_rows has {} entries but the communicator has {} ranks", spec.shard_rows.size(),
                           comm.size()));
  }
  if (spec.heads == 0 || spec.heads % static_cast<std::size_t>(comm.size()) != 0) {
    throw fail(fmt::format("heads = {} is not divisible by the {} ranks; head sharding needs a multiple of {} heads "
                           "(or use halo exchange, which shards the sequence)",
                           spec.heads, comm.size(), comm.size()));
  }
  if (spec.head_dim == 0) throw fail("head_dim = 0; heads need at least one element");
  // The exchange must be able to move the tensors' memory.
  comm.impl().check_buffer(nullptr, 0, spec.memory, comm.impl().begin("HeadTranspose::create"), "spec.memory");
  return HeadTranspose(std::make_unique<detail::HeadTransposeImpl>(comm, spec));
}

HeadTranspose::HeadTranspose(std::unique_ptr<detail::HeadTransposeImpl> impl) noexcept : impl_(std::move(impl)) {}
HeadTranspose::HeadTranspose(HeadTranspose&&) noexcept = default;
HeadTranspose& HeadTranspose::operator=(HeadTranspose&&) noexcept = default;
HeadTranspose::~HeadTranspose() = default;
std::size_t HeadTranspose::sequence_rows() const noexcept { return impl_->sequence_rows(); }
std::size_t HeadTranspose::local_heads() const noexcept { return impl_->local_heads(); }
std::size_t HeadTranspose::bytes_sent() const noexcept { return impl_->bytes_sent(); }
Work HeadTranspose::to_heads(const void* sequence_sharded, void* head_sharded, StreamRef stream) {
  return impl_->to_heads(sequence_sharded, head_sharded, stream);
}
Work HeadTranspose::to_sequence(const void* head_sharded, void* sequence_sharded, StreamRef stream) {
  return impl_->to_sequence(head_sharded, sequence_sharded, stream);
}

}  // namespace meshcomm
