#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string_view>
#include <vector>

#include "meshcomm/buffer.hpp"
#include "meshcomm/collective_options.hpp"
#include "meshcomm/export.hpp"
#include "meshcomm/shared_buffer.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/work.hpp"

namespace meshcomm {

class Bootstrap;

namespace detail {
class CommunicatorImpl;
}

/// The engine a communicator moves bytes with.
enum class BackendKind : std::uint8_t {
  automatic,  ///< chosen from the bootstrap: inproc for InProcessBootstrap, mpi for MpiBootstrap, else ucx
  inproc,     ///< ranks as threads of one process
  mpi,        ///< Open MPI point-to-point (and its collectives as `native`)
  ucx,        ///< UCX tag matching and RMA
  nccl,       ///< NCCL on CUDA memory, stream-ordered
};

/// Name of a backend: "automatic", "inproc", "mpi", "ucx", "nccl".
MESHCOMM_API std::string_view to_string(BackendKind kind) noexcept;

/// How a communicator is created. Fill with designated initializers: `{.timeout = 2s}`.
struct CommOptions {
  BackendKind backend = BackendKind::automatic;
  /// Default for every blocking wait; zero: `MESHCOMM_TIMEOUT` (seconds, or with a unit:
  /// "500ms", "30s", "5m"), else 300 s.
  std::chrono::milliseconds timeout{0};
};

/// A group of ranks that exchange messages: RAII, move-only, not thread-safe (one thread per
/// rank drives it).
///
/// Ranks are numbered [0, size()). Every operation validates its arguments locally and throws
/// `Error(invalid_argument)` naming the argument before anything is started; the communicator
/// stays usable after such an error.
class MESHCOMM_API Communicator {
 public:
  /// Collective over the bootstrap's ranks: creates the root communicator of a job.
  static Communicator create(Bootstrap& bootstrap, const CommOptions& options = {});

  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  /// Local and non-blocking: never communicates.
  ~Communicator();

  /// This rank, in [0, size()).
  [[nodiscard]] int rank() const noexcept;
  /// Number of ranks.
  [[nodiscard]] int size() const noexcept;
  /// The engine in use (never `automatic`).
  [[nodiscard]] BackendKind backend() const noexcept;
  /// The default timeout of every blocking wait on this communicator.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept;
  /// For each rank of this communicator, its rank in the root communicator it was split from.
  [[nodiscard]] std::span<const int> root_ranks() const noexcept;
  /// Largest tag `isend`/`irecv` accept (at least 2^20 - 1).
  [[nodiscard]] int max_tag() const noexcept;

  /// Aborts this communicator, for a watchdog or an error handler: local (never waits on a
  /// peer), returns at once, and is the one call that is safe from any thread while another
  /// drives the communicator. Every pending `Work` fails with `ErrorCode::aborted` (at once on
  /// inproc; on nccl once the NCCL communicator is aborted, at once or at the next poll of a
  /// thread inside a call on it; on mpi as soon as it is tested or waited on, and when it is
  /// destroyed):
  /// receives are withdrawn, so their buffers are no longer written, except that MPI cannot
  /// withdraw a collective of its own (`native`) or a send already under way, whose buffers must
  /// then stay valid until the process ends, as the error says. Every later call fails fast with
  /// `aborted`. Communicators split from this one are not aborted.
  void abort() noexcept;

  /// Collective: ranks passing the same `color` ≥ 0 form a new communicator, ordered by `key`
  /// and then by rank in this one. Throws `Error(invalid_argument)` for a negative color.
  [[nodiscard]] Communicator split(int color, int key) const;

  /// Starts sending `data` to `peer` with `tag` in [0, max_tag()]. Messages between one pair of
  /// ranks with one tag arrive in the order they were sent; the receive must be the same size.
  Work isend(ConstBufferView data, int peer, int tag, StreamRef stream = {});
  /// Starts receiving exactly `data.bytes()` bytes from `peer` with `tag`. A message of another
  /// size fails both sides with `ErrorCode::size_mismatch`.
  Work irecv(BufferView data, int peer, int tag, StreamRef stream = {});

  /// Starts a barrier: it completes on a rank once every rank has started it.
  Work ibarrier();
  /// Blocks until every rank has entered; `timeout` zero means the communicator's default.
  void barrier(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  /// Gathers every rank's `input` into `output` in rank order: `output.count` must be
  /// `input.count * size()`. In place when `input` is this rank's block of `output`.
  ///
  /// Right: `comm.all_gather(shard, full)` with `full.size() == shard.size() * comm.size()`.
  /// Wrong: ranks passing different counts; each rank's Work fails with size_mismatch or timeout.
  ///
  /// Every collective takes the caller's source location last (filled in by default), which
  /// MESHCOMM_DEBUG=callsite compares between ranks (see docs/errors.md).
  Work all_gather(ConstBufferView input, BufferView output, const CollectiveOptions& options = {},
                  std::source_location where = std::source_location::current());

  /// Reduces `input` element-wise over all ranks and leaves block `rank()` of the result in
  /// `output`: `input.count` must be `output.count * size()`. In place when `output` is this
  /// rank's block of `input`.
  Work reduce_scatter(ConstBufferView input, BufferView output, const ReduceOptions& options = {},
                      std::source_location where = std::source_location::current());

  /// Reduces `input` element-wise over all ranks into `output` (same count, any count). In place
  /// when both are the same memory; every rank of a call is in place or none is (as MPI_IN_PLACE
  /// is given at every rank): the algorithm is chosen by it, and ranks that differ fail the call
  /// as ranks that pass different counts do.
  Work all_reduce(ConstBufferView input, BufferView output, const ReduceOptions& options = {},
                  std::source_location where = std::source_location::current());

  /// Block p of `input` goes to rank p, which stores it as block `rank()` of its `output`; the
  /// count must be divisible by `size()`. In place when both are the same memory.
  Work all_to_all(ConstBufferView input, BufferView output, const CollectiveOptions& options = {},
                  std::source_location where = std::source_location::current());

  /// All-to-all with per-peer counts and offsets (see `AllToAllvLayout`); not in place.
  Work all_to_allv(ConstBufferView input, BufferView output, const AllToAllvLayout& layout,
                   const CollectiveOptions& options = {}, std::source_location where = std::source_location::current());

  /// Copies `data` from `options.root` to every rank.
  Work broadcast(BufferView data, const BroadcastOptions& options = {},
                 std::source_location where = std::source_location::current());

  /// Allocates `bytes` of host memory that other ranks on this node can read directly (see
  /// SharedBuffer). Local: no communication. Throws Error(backend_failure) if the system refuses.
  [[nodiscard]] SharedBuffer allocate_shared(std::size_t bytes) const;

  /// The names of the algorithms this communicator offers for `kind`, in registration order.
  [[nodiscard]] std::vector<std::string_view> algorithms(CollectiveKind kind) const;

  /// Internal: the implementation, for meshcomm's own components.
  [[nodiscard]] detail::CommunicatorImpl& impl() const noexcept { return *impl_; }

  /// Internal: wraps an implementation.
  explicit Communicator(std::unique_ptr<detail::CommunicatorImpl> impl) noexcept;

 private:
  std::unique_ptr<detail::CommunicatorImpl> impl_;
};

}  // namespace meshcomm
