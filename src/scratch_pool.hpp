#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace meshcomm::detail {

/// Reusable temporary memory for collectives. Fresh large allocations cost page faults and
/// zeroing on every call; blocks handed back are kept and handed out again.
class ScratchPool {
 public:
  ScratchPool();

  /// At least `bytes` bytes (contents undefined), returned to the pool when the
  /// last copy of the pointer is dropped, even after the pool is gone.
  [[nodiscard]] std::shared_ptr<std::byte[]> acquire(std::size_t bytes);

 private:
  struct Block {
    std::size_t bytes;
    std::unique_ptr<std::byte[]> memory;
  };
  struct State {
    std::mutex mutex;
    std::vector<Block> free;
  };
  std::shared_ptr<State> state_;
};

}  // namespace meshcomm::detail
