#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "meshcomm/buffer.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "../work_state.hpp"
#include "call_site.hpp"
#include "fatal_state.hpp"

namespace meshcomm::detail {

struct CollectiveArgs;
class SegmentProvider;

/// A fixed neighbourhood for repeated neighbour all-to-allv exchanges (MPI's distributed graph).
/// Counts and offsets are in bytes, one entry per edge, in the edge order given at creation.
class NeighborGraph {
 public:
  virtual ~NeighborGraph() = default;
  virtual std::shared_ptr<WorkState> start(const void* send, std::span<const int> send_counts,
                                           std::span<const int> send_offsets, void* recv,
                                           std::span<const int> recv_counts, std::span<const int> recv_offsets) = 0;
};

/// Separates the user's messages from meshcomm's own (collectives, setup), so that neither can
/// match the other's receives whatever tags they use.
enum class Lane : std::uint8_t { user, internal };

/// What became of a pending send or receive when its communicator turned fatal, for
/// FatalState::aborted_error: "this receive of 16 bytes from peer 1 was withdrawn", or, where
/// the engine could not withdraw it, that its buffer must stay valid.
std::string withdrawal_outcome(bool is_send, std::size_t bytes, int peer, bool withdrawn);

/// Error(size_mismatch) of a receive of `posted_bytes` (at `site`, from its peer, `tag`) whose
/// message was larger: the engine truncated it.
Error message_too_large(const CallSite& site, int tag, std::size_t posted_bytes);
/// Error(size_mismatch) of a receive of `posted_bytes` whose message had `sent_bytes`.
Error message_of_other_size(const CallSite& site, int tag, std::size_t sent_bytes, std::size_t posted_bytes);

/// The engine beneath a communicator: point-to-point messages on two lanes and splitting.
/// Algorithms in collectives/ need nothing else; native collectives are optional extras.
class Backend {
 public:
  virtual ~Backend() = default;

  [[nodiscard]] virtual BackendKind kind() const noexcept = 0;
  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  [[nodiscard]] virtual int max_tag() const noexcept = 0;
  /// True if another thread may drive this backend's operations while the caller makes others.
  [[nodiscard]] virtual bool thread_safe() const noexcept { return true; }
  /// True if this backend can move buffers of `memory`.
  [[nodiscard]] virtual bool moves(MemoryKind memory) const noexcept { return memory == MemoryKind::host; }
  /// True if its operations on CUDA memory are queued on the caller's stream (and complete in
  /// stream order); false if it drives them from the host, after the stream's earlier work.
  [[nodiscard]] virtual bool stream_ordered() const noexcept { return false; }

  /// Starts a send; arguments are already validated by the communicator. `stream` orders it on
  /// CUDA memory where the backend is stream-ordered. Null where the send finished inside the
  /// call (a Work reads a null state as complete).
  virtual std::shared_ptr<WorkState> isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                           StreamRef stream) = 0;
  /// Starts a receive of exactly `data.bytes()` bytes. Null where it finished inside the call.
  virtual std::shared_ptr<WorkState> irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                           StreamRef stream) = 0;

  /// Creates the backend of a sub-communicator. Every rank of this backend calls it at the same
  /// point; `members` are the ranks (of this backend) of the caller's new group in new-rank
  /// order, `color` identifies the group among this split's groups, and `split_index` counts the
  /// splits made on this backend so far.
  virtual std::unique_ptr<Backend> split(std::span<const int> members, int color, std::uint64_t split_index) = 0;

  /// Empty if the backend's own collective can run `args`, else why not.
  [[nodiscard]] virtual std::string native_unsupported_reason(const CollectiveArgs&) const {
    return "the " + std::string(to_string(kind())) + " backend has no native collectives";
  }
  /// Whether the backend's own collective can run `args` (native_unsupported_reason is empty).
  [[nodiscard]] virtual bool runs_native(const CollectiveArgs& args) const {
    return native_unsupported_reason(args).empty();
  }
  /// Starts the backend's own collective for `args` (only where native_unsupported_reason is empty).
  virtual std::shared_ptr<WorkState> start_native(const CollectiveArgs&) { return nullptr; }
  /// Starts the backend's own collective for `args` if it can run it, else returns nullptr: the
  /// two questions above in one call, for the per-call path of backends whose every collective
  /// goes native.
  virtual std::shared_ptr<WorkState> try_start_native(const CollectiveArgs& args) {
    return runs_native(args) ? start_native(args) : nullptr;
  }

  /// A neighbourhood graph with edges from `sources` and to `destinations` (repeats allowed: the
  /// k-th edge between two ranks on one side meets the k-th on the other), or nullptr if the
  /// backend has none. Collective over the backend's ranks.
  virtual std::unique_ptr<NeighborGraph> create_neighbor_graph(std::span<const int> /*sources*/,
                                                               std::span<const int> /*destinations*/) {
    return nullptr;
  }

  /// Where Communicator::allocate_shared's memory comes from: POSIX shared memory, unless the
  /// backend maps memory that its peers can put into.
  [[nodiscard]] virtual std::shared_ptr<SegmentProvider> segment_provider() const;
  /// Whether this rank can map `peer`'s allocate_shared memory (SharedMemoryRegistry::map_peer):
  /// the backend knows it is on this host.
  [[nodiscard]] virtual bool shares_memory_with(int /*peer*/) const noexcept { return false; }
  /// Whether `put` works: one-sided puts into peers' allocate_shared memory.
  [[nodiscard]] virtual bool puts() const noexcept { return false; }
  /// Starts putting `source` into `peer`'s segment `handle` (what SharedMemoryRegistry::locate
  /// says on that rank) at byte `offset`; completes once the bytes are in place there (null
  /// where they already are when it returns). Only where puts() is true (else throws
  /// Error(unsupported)).
  virtual std::shared_ptr<WorkState> put(ConstBufferView source, int peer, const std::string& handle,
                                         std::size_t offset, OperationLabel label);

  /// Makes the communicator fatal with `cause` and fails its pending operations (Communicator::
  /// abort). Local, never blocks on a peer, safe from any thread; pending operations that the
  /// backend cannot reach from here fail as they are next tested or waited on.
  virtual void abort(const Error& cause) { fatal_->set(cause); }

  /// The fatal state shared with this backend's operations.
  [[nodiscard]] const std::shared_ptr<FatalState>& fatal_state() const noexcept { return fatal_; }

 protected:
  /// Where an operation on `peer` is issued, expanded into an ErrorContext only on an error.
  [[nodiscard]] CallSite call_site(OperationLabel label, int peer) const {
    return {.label = label, .rank = rank(), .peer = peer, .backend = kind()};
  }

  /// An error context for an operation of this backend.
  [[nodiscard]] ErrorContext context(OperationLabel label, int peer) const {
    return {.backend = std::string(to_string(kind())), .operation = label.name, .rank = rank(), .peer = peer,
            .sequence = label.sequence};
  }

 private:
  std::shared_ptr<FatalState> fatal_ = std::make_shared<FatalState>();
};

}  // namespace meshcomm::detail
