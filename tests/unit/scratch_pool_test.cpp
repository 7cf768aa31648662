// The scratch pool hands host blocks out half a page into a page (so that copies between them
// and callers' page-aligned buffers do not run at the same offset within a page), gives back the
// smallest kept block that fits, keeps the largest blocks once it is full, and keeps blocks
// handed out after the pool is gone valid. Pools that share host blocks per thread hand one
// thread's blocks to each other, never to another thread.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "scratch_pool.hpp"

namespace meshcomm::detail {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t offset_in_page(const std::shared_ptr<std::byte[]>& block) {
  return reinterpret_cast<std::uintptr_t>(block.get()) % kPage;
}

TEST(ScratchPool, HostBlocksStartHalfAPageIntoAPage) {
  ScratchPool pool;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{64}, std::size_t{4096}, std::size_t{3} << 20}) {
    auto block = pool.acquire(bytes);
    EXPECT_EQ(offset_in_page(block), kPage / 2) << bytes << " bytes";
    std::memset(block.get(), 0x5a, bytes);  // every byte asked for is usable
  }
}

TEST(ScratchPool, AReturnedBlockIsHandedOutAgainWhenItFits) {
  ScratchPool pool;
  std::byte* first = nullptr;
  {
    auto block = pool.acquire(1 << 20);
    first = block.get();
  }
  auto smaller = pool.acquire(1 << 19);
  EXPECT_EQ(smaller.get(), first);
  auto larger = pool.acquire(2 << 20);
  EXPECT_NE(larger.get(), first);
  EXPECT_EQ(offset_in_page(larger), kPage / 2);
}

TEST(ScratchPool, AFullPoolKeepsALargeBlockOverSmallOnes) {
  ScratchPool pool;
  {
    std::vector<std::shared_ptr<std::byte[]>> small;
    for (int k = 0; k < 16; ++k) small.push_back(pool.acquire(4096));
  }  // the pool is full of small blocks now
  const std::size_t small_ones = pool.kept_bytes();
  EXPECT_LT(small_ones, std::size_t{1} << 20);
  std::byte* large = nullptr;
  {
    auto block = pool.acquire(4 << 20);
    large = block.get();
  }
  EXPECT_GE(pool.kept_bytes(), std::size_t{4} << 20);
  EXPECT_LT(pool.kept_bytes(), small_ones + (std::size_t{4} << 20));  // a small block made room
  auto again = pool.acquire(4 << 20);
  EXPECT_EQ(again.get(), large);
  auto small = pool.acquire(4096);
  EXPECT_NE(small.get(), large);  // a small block still kept serves a small call
}

TEST(ScratchPool, BlocksOutliveThePool) {
  std::shared_ptr<std::byte[]> block;
  {
    ScratchPool pool;
    block = pool.acquire(1 << 16);
  }
  std::memset(block.get(), 0x11, 1 << 16);
  block.reset();  // released straight to the allocator: the pool is gone
}

TEST(ScratchPool, PoolsSharingHostBlocksHandOneThreadTheSameBlocks) {
  ScratchPool first(ScratchPool::Sharing::host_blocks_per_thread);
  std::byte* returned = nullptr;
  {
    auto block = first.acquire(1 << 20);
    returned = block.get();
  }
  ScratchPool second(ScratchPool::Sharing::host_blocks_per_thread);
  EXPECT_GE(second.kept_bytes(), std::size_t{1} << 20);
  auto again = second.acquire(1 << 20);
  EXPECT_EQ(again.get(), returned);  // the block the other pool was handed back
  EXPECT_EQ(offset_in_page(again), kPage / 2);
}

TEST(ScratchPool, PoolsOfTheirOwnShareNothing) {
  ScratchPool first;
  std::byte* returned = nullptr;
  {
    auto block = first.acquire(1 << 20);
    returned = block.get();
  }
  ScratchPool second;
  EXPECT_EQ(second.kept_bytes(), 0u);
  auto other = second.acquire(1 << 20);
  EXPECT_NE(other.get(), returned);
}

TEST(ScratchPool, AnotherThreadKeepsHostBlocksOfItsOwn) {
  ScratchPool pool(ScratchPool::Sharing::host_blocks_per_thread);
  std::byte* returned = nullptr;
  {
    auto block = pool.acquire(3 << 20);
    returned = block.get();
  }
  std::byte* elsewhere = nullptr;
  std::size_t kept_elsewhere = 1;
  std::thread other([&] {
    kept_elsewhere = pool.kept_bytes();
    auto block = pool.acquire(3 << 20);
    elsewhere = block.get();
    std::memset(block.get(), 0x22, 3 << 20);
  });
  other.join();
  EXPECT_EQ(kept_elsewhere, 0u);
  EXPECT_NE(elsewhere, returned);  // that thread made its own
  auto again = pool.acquire(3 << 20);
  EXPECT_EQ(again.get(), returned);  // this thread's block stayed here
}

TEST(ScratchPool, SharedHostBlocksOutliveTheirThread) {
  ScratchPool pool(ScratchPool::Sharing::host_blocks_per_thread);
  std::shared_ptr<std::byte[]> block;
  std::thread other([&] { block = pool.acquire(1 << 16); });
  other.join();  // the thread's store is gone now
  std::memset(block.get(), 0x33, 1 << 16);
  block.reset();  // released straight to the allocator
}

}  // namespace
}  // namespace meshcomm::detail
