#include "scratch_pool.hpp"

#include <algorithm>

namespace meshcomm::detail {

namespace {
constexpr std::size_t kKeptBlocks = 8;
}

ScratchPool::ScratchPool() : state_(std::make_shared<State>()) {}

std::shared_ptr<std::byte[]> ScratchPool::acquire(std::size_t bytes) {
  Block block{0, nullptr};
  {
    std::lock_guard lock(state_->mutex);
    auto& free = state_->free;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->bytes >= bytes && (best == free.end() || it->bytes < best->bytes)) best = it;
    }
    if (best != free.end()) {
      block = std::move(*best);
      free.erase(best);
    }
  }
  if (block.memory == nullptr) {
    block.bytes = std::max<std::size_t>(bytes, 64);
    block.memory.reset(new std::byte[block.bytes]);
  }
  std::byte* pointer = block.memory.get();
  std::weak_ptr<State> home = state_;
  return std::shared_ptr<std::byte[]>(
      pointer, [home, bytes = block.bytes, owned = std::make_shared<std::unique_ptr<std::byte[]>>(
                                              std::move(block.memory))](std::byte*) mutable {
        auto state = home.lock();
        if (state == nullptr) return;
        std::lock_guard lock(state->mutex);
        if (state->free.size() < kKeptBlocks) state->free.push_back({bytes, std::move(*owned)});
      });
}

}  // namespace meshcomm::detail
