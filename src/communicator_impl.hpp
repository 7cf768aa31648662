#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "backend/backend.hpp"
#include "flight_recorder.hpp"
#include "patterns/collective_tags.hpp"
#include "scratch_pool.hpp"
#include "meshcomm/communicator.hpp"

namespace meshcomm::detail {

class CollectiveEngine;
class EagerMailbox;
class SharedMemoryRegistry;

/// What a root communicator and every communicator split from it share.
struct CommunicatorFamily {
  std::shared_ptr<const CollectiveEngine> collectives;
  std::shared_ptr<SharedMemoryRegistry> shared_memory;
};

/// The state behind a `Communicator`: its backend, its members' root ranks, its default timeout
/// and its operation counters. Validates every call before handing it to the backend.
class CommunicatorImpl {
 public:
  CommunicatorImpl(std::unique_ptr<Backend> backend, std::vector<int> root_ranks, std::chrono::milliseconds timeout,
                   std::shared_ptr<const CommunicatorFamily> family);

  [[nodiscard]] Backend& backend() const noexcept { return *backend_; }
  [[nodiscard]] BackendKind backend_kind() const noexcept { return backend_kind_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// Whether the backend queues work on CUDA streams (see Backend::stream_ordered).
  [[nodiscard]] bool stream_ordered() const noexcept { return stream_ordered_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  [[nodiscard]] const std::vector<int>& root_ranks() const noexcept { return root_ranks_; }

  /// A Work over `state` with this communicator's default timeout.
  [[nodiscard]] Work make_work(std::shared_ptr<WorkState> state,
                               std::uint64_t record_index = Work::kNotRecorded) const {
    return Work(std::move(state), timeout_, &recorder_, record_index);
  }

  /// Keeps a call in this communicator's flight record (FlightRecorder), dumped on the first
  /// failure one of its works reports; returns its index, for make_work (its completion time).
  std::uint64_t record(const FlightEntry& entry) const noexcept { return recorder_.record(entry); }
  /// Notes that the call kept at `index` completed inside its call, with no Work to see it.
  void record_completed(std::uint64_t index) const noexcept {
    if (index != Work::kNotRecorded) recorder_.completed(index);
  }

  /// Numbers the next operation and checks the communicator is still usable.
  [[nodiscard]] OperationLabel begin(const char* operation) {
    fatal_->throw_if_set(operation);
    return {.name = operation, .sequence = sequence_++};
  }

  /// A tag on the internal lane for the next internal operation, distinct from recent ones.
  [[nodiscard]] int next_internal_tag() { return reserve_internal_tags(1); }
  /// The first of `count` consecutive internal tags for the next internal operation: within an
  /// open collective window, the window's next slots (see CollectiveTags), else the next tags in
  /// order.
  [[nodiscard]] int reserve_internal_tags(int count);

  /// Numbers a collective call: every rank counts every collective, whichever path runs it.
  [[nodiscard]] std::uint64_t next_collective() noexcept { return collective_count_++; }
  /// Until close_collective_tags(), internal tags come from the window of collective number
  /// `call` with `fingerprint` (where the backend's tags are wide enough; else in order).
  void open_collective_tags(std::uint64_t fingerprint, std::uint64_t call) noexcept {
    if (!fingerprinted_tags_) return;
    collective_window_ = CollectiveTags::window(fingerprint, call);
    collective_slot_ = 0;
  }
  void close_collective_tags() noexcept { collective_window_ = -1; }

  /// The collective algorithms and their selection, shared with communicators split from this one.
  [[nodiscard]] const CollectiveEngine& collectives() const noexcept { return *collectives_; }
  /// The shared-memory segments of this family of communicators.
  [[nodiscard]] SharedMemoryRegistry& shared_memory() const noexcept { return *family_->shared_memory; }
  /// What this communicator shares with those split from it.
  [[nodiscard]] const std::shared_ptr<const CommunicatorFamily>& family() const noexcept { return family_; }

  /// Throws Error(invalid_argument) unless `peer` is a rank of this communicator. Inline: on
  /// every send's and receive's path.
  void check_peer(int peer, OperationLabel label) const {
    if (peer < 0 || peer >= size_) [[unlikely]] reject_peer(peer, label);
  }
  /// Throws Error(invalid_argument) unless `tag` is in [0, max_tag], inline as check_peer.
  void check_tag(int tag, OperationLabel label) const {
    if (tag < 0 || tag > max_tag_) [[unlikely]] reject_tag(tag, label);
  }
  /// Throws unless `data` can be moved by this backend (pointer set, memory kind supported, and
  /// CUDA memory where the backend checks pointers). Inline: on every call's path.
  void check_buffer(const void* data, std::size_t count, MemoryKind memory, OperationLabel label,
                    const char* argument) const {
    const auto kind = static_cast<std::size_t>(memory);
    const bool plainly_fine = kind < plainly_moved_.size() && plainly_moved_[kind];
    if (!plainly_fine || (data == nullptr && count > 0)) [[unlikely]] {
      check_buffer_fully(data, count, memory, label, argument);
    }
  }

  /// Throws Error(invalid_argument) unless `count` elements of `type` are a size a buffer can have:
  /// their bytes must not wrap. Inline and one comparison: on every call's path.
  void check_extent(std::size_t count, DataType type, OperationLabel label, const char* argument) const {
    if (count > kCountsThatCannotWrap) [[unlikely]] check_extent_fully(count, type, label, argument);
  }

  /// A backend driven from the host touches CUDA buffers as soon as an operation starts: waits
  /// for `stream`'s earlier work first. Stream-ordered backends queue behind it instead.
  void order_after_stream(MemoryKind memory, StreamRef stream) const;

  /// An error context naming this communicator's backend, rank and the operation.
  [[nodiscard]] ErrorContext context(OperationLabel label, int peer = -1) const;

  /// The shared slots of tiny collectives (EagerMailbox); null where the ranks cannot share them.
  [[nodiscard]] const std::shared_ptr<EagerMailbox>& eager_mailbox() const noexcept { return eager_mailbox_; }
  /// Sets up the eager slots: collective, called as the communicator is made.
  void set_up_eager_mailbox();
  /// Whether every rank runs on this host and maps the others' shared memory, as the ranks agreed
  /// in setting up the eager slots: 2 to EagerMailbox::kMaxRanks ranks on mpi, ucx or inproc.
  /// False elsewhere (more ranks, ranks on other hosts, nccl), so rows that need it stand aside.
  [[nodiscard]] bool shares_one_host() const noexcept { return eager_mailbox_ != nullptr; }

  /// Temporary memory for collectives, reused across calls; host blocks shared with the other
  /// communicators (and mpi backends) the calling thread uses.
  [[nodiscard]] ScratchPool& scratch() noexcept { return scratch_; }

  /// Counts splits, so that every rank names the same split the same way.
  std::uint64_t next_split_index() noexcept { return split_count_++; }

 private:
  [[noreturn]] void reject_peer(int peer, OperationLabel label) const;
  [[noreturn]] void reject_tag(int tag, OperationLabel label) const;
  void check_buffer_fully(const void* data, std::size_t count, MemoryKind memory, OperationLabel label,
                          const char* argument) const;
  void check_extent_fully(std::size_t count, DataType type, OperationLabel label, const char* argument) const;

  /// Counts up to which no type's bytes can pass PTRDIFF_MAX (no element is larger than 8 bytes).
  static constexpr std::size_t kCountsThatCannotWrap = std::numeric_limits<std::ptrdiff_t>::max() / 8;

  std::unique_ptr<Backend> backend_;
  // What every call reads, kept together at the front so that a call touches few cache lines,
  // and the backend's answers read once so that the per-call checks make no virtual calls (a
  // backend's answers never change).
  const FatalState* fatal_;
  const CollectiveEngine* collectives_;
  std::int64_t sequence_ = 0;
  std::chrono::milliseconds timeout_;
  BackendKind backend_kind_;
  int rank_;
  int size_;
  int max_tag_;
  bool stream_ordered_;
  bool moves_host_;
  bool moves_cuda_;
  bool checks_cuda_pointers_;
  /// Per memory kind, whether a buffer of it needs no check beyond its pointer: the backend moves
  /// it, and (for CUDA memory) does not check that it is device memory.
  std::array<bool, 2> plainly_moved_;
  std::vector<int> root_ranks_;
  std::shared_ptr<const CommunicatorFamily> family_;
  int internal_tag_ = 0;
  std::uint64_t collective_count_ = 0;
  bool fingerprinted_tags_;     ///< the backend's tags hold CollectiveTags' layout
  int collective_window_ = -1;  ///< the open collective window's first tag, or -1
  int collective_slot_ = 0;     ///< its next free slot
  std::uint64_t split_count_ = 0;
  ScratchPool scratch_{ScratchPool::Sharing::host_blocks_per_thread};
  std::shared_ptr<EagerMailbox> eager_mailbox_;
  /// Diagnostics written from const paths (every call's), never read by them: mutable.
  mutable FlightRecorder recorder_;
};

/// While alive, `comm`'s internal tags come from the window of collective number `call` with
/// `fingerprint` (see CollectiveTags): what a collective's algorithm reserves as it starts.
class CollectiveTagWindow {
 public:
  CollectiveTagWindow(CommunicatorImpl& comm, std::uint64_t fingerprint, std::uint64_t call) noexcept : comm_(comm) {
    comm.open_collective_tags(fingerprint, call);
  }
  ~CollectiveTagWindow() { comm_.close_collective_tags(); }
  CollectiveTagWindow(const CollectiveTagWindow&) = delete;
  CollectiveTagWindow& operator=(const CollectiveTagWindow&) = delete;

 private:
  CommunicatorImpl& comm_;
};

/// Creates the backend a bootstrap asks for. The one list of compiled-in backends.
std::unique_ptr<Backend> create_backend(Bootstrap& bootstrap, BackendKind kind, std::chrono::milliseconds timeout);

}  // namespace meshcomm::detail
