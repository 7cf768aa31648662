#pragma once

#include <cstddef>
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
  ScratchPool();

  /// At least `bytes` bytes of `memory` (contents undefined), returned to the pool when the
  /// last copy of the pointer is dropped, even after the pool is gone.
  [[nodiscard]] std::shared_ptr<std::byte[]> acquire(std::size_t bytes, MemoryKind memory = MemoryKind::host);

  /// Bytes held for reuse: the blocks handed back and kept.
  [[nodiscard]] std::size_t kept_bytes() const;

 private:
  struct Block {
    std::size_t bytes = 0;
    MemoryKind memory = MemoryKind::host;
    std::byte* pointer = nullptr;
  };
  struct State {
    std::mutex mutex;
    std::vector<Block> free;
    /// Keeps `returned` for reuse (the largest blocks, up to a fixed count); returns the block
    /// that is not kept (empty if none), for the caller to release outside the lock.
    Block keep(const Block& returned);
    ~State();
  };
  static Block allocate(std::size_t bytes, MemoryKind memory);
  static void release(const Block& block) noexcept;
  std::shared_ptr<State> state_;
};

}  // namespace meshcomm::detail
