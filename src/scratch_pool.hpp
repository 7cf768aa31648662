#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// Reusable temporary memory for collectives, on the host or on the device. Fresh large
/// allocations cost page faults and zeroing (or a device synchronisation) on every call; blocks
/// handed back are kept (up to eight, the largest) and handed out again.
class ScratchPool {
 public:
  /// Where a pool's blocks come from and go back to.
  enum class Sharing : std::uint8_t {
    /// Every block from the pool's own store.
    own,
    /// Host blocks from a store of the acquiring thread's, shared by every pool of this kind that
    /// thread acquires from (a process's communicators, one per mesh axis, and its backends), so
    /// that they reuse one set of blocks, warm in the cache of the core that thread runs on;
    /// device blocks from the pool's own store (they belong to the device they were made on).
    host_blocks_per_thread,
  };

  explicit ScratchPool(Sharing sharing = Sharing::own);

  /// At least `bytes` bytes of `memory` (contents undefined), returned to the pool when the
  /// last copy of the pointer is dropped, even after the pool is gone.
  [[nodiscard]] std::shared_ptr<std::byte[]> acquire(std::size_t bytes, MemoryKind memory = MemoryKind::host);

  /// Bytes held for reuse: the blocks handed back and kept, in the pool's own store and, where
  /// it shares host blocks, in the calling thread's.
  [[nodiscard]] std::size_t kept_bytes() const;

 private:
  struct Block {
    std::size_t bytes = 0;
    MemoryKind memory = MemoryKind::host;
    std::byte* pointer = nullptr;
  };
  /// Blocks handed back and kept for reuse, behind a lock: any thread may hand a block back.
  struct Store {
    std::mutex mutex;
    std::vector<Block> free;
    /// Keeps `returned` for reuse (the largest blocks, up to a fixed count); returns the block
    /// that is not kept (empty if none), for the caller to release outside the lock.
    Block keep(const Block& returned);
    ~Store();
  };
  static Block allocate(std::size_t bytes, MemoryKind memory);
  static void release(const Block& block) noexcept;
  /// The store that blocks of `memory` come from on the calling thread.
  [[nodiscard]] const std::shared_ptr<Store>& store_for(MemoryKind memory) const;
  /// The calling thread's store of shared host blocks, freed with its blocks as the thread ends.
  static const std::shared_ptr<Store>& thread_host_store();
  static std::size_t kept_bytes_of(Store& store);
  std::shared_ptr<Store> own_store_;
  Sharing sharing_;
};

}  // namespace meshcomm::detail
