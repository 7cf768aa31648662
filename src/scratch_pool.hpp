#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// Reusable temporary memory for collectives, on the host or on the device. Fresh large
/// allocations cost page faults and zeroing (or a device synchronisation) on every call; blocks
/// handed back are kept and handed out again.
class ScratchPool {
 public:
  ScratchPool();

  /// At least `bytes` bytes of `memory` (contents undefined), returned to the pool when the
  /// last copy of the pointer is dropped, even after the pool is gone.
  [[nodiscard]] std::shared_ptr<std::byte[]> acquire(std::size_t bytes, MemoryKind memory = MemoryKind::host);

 private:
  struct Block {
    std::size_t bytes = 0;
    MemoryKind memory = MemoryKind::host;
    std::byte* pointer = nullptr;
  };
  struct State {
    std::mutex mutex;
    std::vector<Block> free;
    ~State();
  };
  static Block allocate(std::size_t bytes, MemoryKind memory);
  static void release(const Block& block) noexcept;
  std::shared_ptr<State> state_;
};

}  // namespace meshcomm::detail
