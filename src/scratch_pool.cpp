#include "scratch_pool.hpp"

#include <algorithm>

#include "device/device_runtime.hpp"

namespace meshcomm::detail {

namespace {
constexpr std::size_t kKeptBlocks = 8;
}

ScratchPool::ScratchPool() : state_(std::make_shared<State>()) {}

ScratchPool::State::~State() {
  for (const auto& block : free) release(block);
}

ScratchPool::Block ScratchPool::allocate(std::size_t bytes, MemoryKind memory) {
  const std::size_t size = std::max<std::size_t>(bytes, 64);
  auto* pointer = memory == MemoryKind::cuda ? static_cast<std::byte*>(device::allocate(size)) : new std::byte[size];
  return {size, memory, pointer};
}

void ScratchPool::release(const Block& block) noexcept {
  if (block.memory == MemoryKind::cuda) {
    device::release(block.pointer);
  } else {
    delete[] block.pointer;
  }
}

std::shared_ptr<std::byte[]> ScratchPool::acquire(std::size_t bytes, MemoryKind memory) {
  Block block;
  {
    std::lock_guard lock(state_->mutex);
    auto& free = state_->free;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->memory == memory && it->bytes >= bytes && (best == free.end() || it->bytes < best->bytes)) best = it;
    }
    if (best != free.end()) {
      block = *best;
      free.erase(best);
    }
  }
  if (block.pointer == nullptr) block = allocate(bytes, memory);
  std::weak_ptr<State> home = state_;
  return std::shared_ptr<std::byte[]>(block.pointer, [home, block](std::byte*) {
    auto state = home.lock();
    if (state != nullptr) {
      std::lock_guard lock(state->mutex);
      if (state->free.size() < kKeptBlocks) {
        state->free.push_back(block);
        return;
      }
    }
    release(block);
  });
}

}  // namespace meshcomm::detail
