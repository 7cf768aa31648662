#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.hpp"
#include "scratch_pool.hpp"
#include "meshcomm/communicator.hpp"

namespace meshcomm::detail {

class CollectiveEngine;
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
  [[nodiscard]] int rank() const noexcept { return backend_->rank(); }
  [[nodiscard]] int size() const noexcept { return backend_->size(); }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  [[nodiscard]] const std::vector<int>& root_ranks() const noexcept { return root_ranks_; }

  /// A Work over `state` with this communicator's default timeout.
  [[nodiscard]] Work make_work(std::shared_ptr<WorkState> state) const { return Work(std::move(state), timeout_); }

  /// Numbers the next operation and checks the communicator is still usable.
  [[nodiscard]] OperationLabel begin(const char* operation);

  /// A tag on the internal lane for the next internal operation, distinct from recent ones.
  [[nodiscard]] int next_internal_tag() { return reserve_internal_tags(1); }
  /// The first of `count` consecutive internal tags for the next internal operation.
  [[nodiscard]] int reserve_internal_tags(int count);

  /// The collective algorithms and their selection, shared with communicators split from this one.
  [[nodiscard]] const CollectiveEngine& collectives() const noexcept { return *family_->collectives; }
  /// The shared-memory segments of this family of communicators.
  [[nodiscard]] SharedMemoryRegistry& shared_memory() const noexcept { return *family_->shared_memory; }
  /// What this communicator shares with those split from it.
  [[nodiscard]] const std::shared_ptr<const CommunicatorFamily>& family() const noexcept { return family_; }

  /// Throws Error(invalid_argument) unless `peer` is a rank of this communicator.
  void check_peer(int peer, OperationLabel label) const;
  /// Throws Error(invalid_argument) unless `tag` is in [0, max_tag].
  void check_tag(int tag, OperationLabel label) const;
  /// Throws unless `data` can be moved by this backend (pointer set, memory kind supported).
  void check_buffer(const void* data, std::size_t count, MemoryKind memory, OperationLabel label,
                    const char* argument) const;

  /// A backend driven from the host touches CUDA buffers as soon as an operation starts: waits
  /// for `stream`'s earlier work first. Stream-ordered backends queue behind it instead.
  void order_after_stream(MemoryKind memory, StreamRef stream) const;

  /// An error context naming this communicator's backend, rank and the operation.
  [[nodiscard]] ErrorContext context(OperationLabel label, int peer = -1) const;

  /// Temporary memory for collectives, reused across calls.
  [[nodiscard]] ScratchPool& scratch() noexcept { return scratch_; }

  /// Counts splits, so that every rank names the same split the same way.
  std::uint64_t next_split_index() noexcept { return split_count_++; }

 private:
  std::unique_ptr<Backend> backend_;
  std::vector<int> root_ranks_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const CommunicatorFamily> family_;
  std::int64_t sequence_ = 0;
  int internal_tag_ = 0;
  std::uint64_t split_count_ = 0;
  ScratchPool scratch_;
};

/// Creates the backend a bootstrap asks for. The one list of compiled-in backends.
std::unique_ptr<Backend> create_backend(Bootstrap& bootstrap, BackendKind kind, std::chrono::milliseconds timeout);

}  // namespace meshcomm::detail
