#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "meshcomm/export.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"
#include "meshcomm/work.hpp"

namespace meshcomm {

class Communicator;

namespace detail {
class HeadTransposeImpl;
}

/// The shape of a [rows, heads, head_dim] tensor sharded over a communicator.
struct HeadTransposeSpec {
  std::vector<std::size_t> shard_rows;  ///< rows of every rank's sequence shard (uneven allowed)
  std::size_t heads = 1;                ///< must be divisible by the communicator size
  std::size_t head_dim = 1;
  DataType type = DataType::f32;
  /// Where both tensors live: host, or cuda (rows are shuffled by device copies on the call's
  /// stream; the communicator's backend must move CUDA memory: inproc or nccl).
  MemoryKind memory = MemoryKind::host;
};

/// The all-to-all transpose between sequence sharding ([rows of this rank, heads, head_dim]) and
/// head sharding ([all rows, heads / size, head_dim]): what sliding-window attention needs
/// instead of halos (DeepSpeed-Ulysses style). Planned once, started many times.
///
/// On CUDA memory a call starts after `stream`'s earlier work; on inproc its Work completes with
/// the result in place, on nccl the result is ordered on `stream`. A plan on CUDA memory packs
/// through one buffer of its own: keep its calls on one stream, or wait for each before the next.
class MESHCOMM_API HeadTranspose {
 public:
  /// Collective over `comm`. Throws Error(invalid_argument) if `heads` is not divisible by the
  /// communicator size, naming both.
  static HeadTranspose create(Communicator& comm, const HeadTransposeSpec& spec);

  HeadTranspose(HeadTranspose&&) noexcept;
  HeadTranspose& operator=(HeadTranspose&&) noexcept;
  ~HeadTranspose();

  /// Rows of the whole sequence.
  [[nodiscard]] std::size_t sequence_rows() const noexcept;
  /// Heads each rank holds after `to_heads`.
  [[nodiscard]] std::size_t local_heads() const noexcept;
  /// Bytes this rank sends per transpose (its rows of every other rank's heads).
  [[nodiscard]] std::size_t bytes_sent() const noexcept;

  /// [shard rows, heads, dim] → [all rows, local heads, dim].
  Work to_heads(const void* sequence_sharded, void* head_sharded, StreamRef stream = {});
  /// [all rows, local heads, dim] → [shard rows, heads, dim].
  Work to_sequence(const void* head_sharded, void* sequence_sharded, StreamRef stream = {});

 private:
  explicit HeadTranspose(std::unique_ptr<detail::HeadTransposeImpl> impl) noexcept;
  std::unique_ptr<detail::HeadTransposeImpl> impl_;
};

}  // namespace meshcomm
