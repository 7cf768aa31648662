// The scratch pool hands host blocks out half a page into a page (so that copies between them
// and callers' page-aligned buffers do not run at the same offset within a page), gives back the
// smallest kept block that fits, keeps the largest blocks once it is full, and keeps blocks
// handed out after the pool is gone valid.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
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

}  // namespace
}  // namespace meshcomm::detail
