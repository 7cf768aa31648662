#include "scratch_pool.hpp"

#include <algorithm>
#include <new>

#include "device/device_runtime.hpp"

namespace meshcomm::detail {

namespace {
constexpr std::size_t kKeptBlocks = 8;

/// Host scratch starts half a page into its first page. Collectives copy between scratch and the
/// caller's buffers, and peers' single-copy reads (Open MPI's CMA, UCX's) copy between a scratch
/// block on one side and a caller's buffer on the other. On the 2-core AMD VM of
/// perftests/HISTORY.md ("Where scratch starts within a page"), a two-rank exchange from a copy
/// ran 10-17% slower when the copy started at the same offset within a page as the caller's
/// buffer, or up to 128 bytes from it, than 256 bytes or more from it; a caller's buffer is
/// usually page-aligned or just past a malloc header.
constexpr std::size_t kPage = 4096;
constexpr std::size_t kHostStagger = kPage / 2;
}  // namespace

ScratchPool::ScratchPool(Sharing sharing) : own_store_(std::make_shared<Store>()), sharing_(sharing) {}

const std::shared_ptr<ScratchPool::Store>& ScratchPool::thread_host_store() {
  thread_local const auto store = std::make_shared<Store>();
  return store;
}

const std::shared_ptr<ScratchPool::Store>& ScratchPool::store_for(MemoryKind memory) const {
  if (sharing_ == Sharing::host_blocks_per_thread && memory == MemoryKind::host) return thread_host_store();
  return own_store_;
}

ScratchPool::Store::~Store() {
  for (const auto& block : free) release(block);
}

ScratchPool::Block ScratchPool::allocate(std::size_t bytes, MemoryKind memory) {
  const std::size_t size = std::max<std::size_t>(bytes, 64);
  if (memory == MemoryKind::cuda) return {size, memory, static_cast<std::byte*>(device::allocate(size))};
  auto* page = static_cast<std::byte*>(::operator new(size + kHostStagger, std::align_val_t{kPage}));
  return {size, memory, page + kHostStagger};
}

void ScratchPool::release(const Block& block) noexcept {
  if (block.pointer == nullptr) return;
  if (block.memory == MemoryKind::cuda) {
    device::release(block.pointer);
  } else {
    ::operator delete(block.pointer - kHostStagger, std::align_val_t{kPage});
  }
}

std::shared_ptr<std::byte[]> ScratchPool::acquire(std::size_t bytes, MemoryKind memory) {
  const auto& store = store_for(memory);
  Block block;
  {
    std::lock_guard lock(store->mutex);
    auto& free = store->free;
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
  std::weak_ptr<Store> home = store;
  return std::shared_ptr<std::byte[]>(block.pointer, [home, block](std::byte*) {
    auto home_store = home.lock();
    if (home_store == nullptr) {
      release(block);
      return;
    }
    release(home_store->keep(block));
  });
}

std::size_t ScratchPool::kept_bytes_of(Store& store) {
  std::lock_guard lock(store.mutex);
  std::size_t bytes = 0;
  for (const auto& block : store.free) bytes += block.bytes;
  return bytes;
}

std::size_t ScratchPool::kept_bytes() const {
  const std::size_t own = kept_bytes_of(*own_store_);
  if (sharing_ == Sharing::own) return own;
  return own + kept_bytes_of(*thread_host_store());
}

ScratchPool::Block ScratchPool::Store::keep(const Block& returned) {
  std::lock_guard lock(mutex);
  if (free.size() < kKeptBlocks) {
    free.push_back(returned);
    return {};
  }
  // Full: the smallest block goes. Dropping the one just returned instead would let a few small
  // blocks shut every larger one out, to be allocated and faulted in again on every call (a
  // 16 MiB reduce-scatter after smaller ones ran 2.4x slower so).
  auto smallest =
      std::min_element(free.begin(), free.end(), [](const Block& a, const Block& b) { return a.bytes < b.bytes; });
  if (smallest->bytes >= returned.bytes) return returned;
  const Block evicted = *smallest;
  *smallest = returned;
  return evicted;
}

}  // namespace meshcomm::detail
