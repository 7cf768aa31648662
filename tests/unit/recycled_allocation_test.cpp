// Recycled blocks: a block given back is the next one taken on that thread, a shelf keeps at most
// kBlocks, blocks given back on another thread stay usable there, and shared objects made through
// RecyclingAllocator are built, reused and destroyed like make_shared's, and lists made through
// ShortListAllocator reuse one block while short and keep their elements as they outgrow it (the
// sanitized build checks that nothing leaks or is used after it is freed).

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "recycled_allocation.hpp"

namespace meshcomm::detail {
namespace {

struct Small {
  int value;
};

TEST(RecycledBlocks, ABlockGivenBackIsTheNextTaken) {
  void* first = RecycledBlocks<Small>::take();
  RecycledBlocks<Small>::give(first);
  void* second = RecycledBlocks<Small>::take();
  EXPECT_EQ(second, first);
  RecycledBlocks<Small>::give(second);
}

TEST(RecycledBlocks, AShelfKeepsAtMostItsCapacity) {
  constexpr std::size_t kMore = RecycledBlocks<Small>::kBlocks + 8;
  std::vector<void*> blocks;
  for (std::size_t index = 0; index < kMore; ++index) blocks.push_back(RecycledBlocks<Small>::take());
  const std::set<void*> distinct(blocks.begin(), blocks.end());
  EXPECT_EQ(distinct.size(), kMore);
  for (void* block : blocks) RecycledBlocks<Small>::give(block);
  // The shelf holds the first kBlocks given back; the rest went to the heap.
  std::set<void*> kept;
  for (std::size_t index = 0; index < RecycledBlocks<Small>::kBlocks; ++index) {
    kept.insert(RecycledBlocks<Small>::take());
  }
  const std::set<void*> first_given(blocks.begin(), blocks.begin() + RecycledBlocks<Small>::kBlocks);
  EXPECT_EQ(kept, first_given);
  for (void* block : kept) RecycledBlocks<Small>::give(block);
}

TEST(RecycledBlocks, BlocksGivenBackOnAnotherThreadServeThatThread) {
  void* block = RecycledBlocks<Small>::take();
  void* taken_there = nullptr;
  std::thread other([&] {
    RecycledBlocks<Small>::give(block);
    taken_there = RecycledBlocks<Small>::take();
    RecycledBlocks<Small>::give(taken_there);  // freed as the thread ends
  });
  other.join();
  EXPECT_EQ(taken_there, block);
}

TEST(RecyclingAllocator, SharedObjectsAreBuiltAndDestroyedAsWithMakeShared) {
  auto first = std::allocate_shared<std::string>(RecyclingAllocator<std::string>{}, 100, 'x');
  EXPECT_EQ(*first, std::string(100, 'x'));
  const auto* first_address = first.get();
  std::weak_ptr<std::string> watcher = first;
  {
    auto copy = first;
    EXPECT_EQ(copy.use_count(), 2);
  }
  first.reset();
  EXPECT_TRUE(watcher.expired());
  watcher.reset();  // the control block (and the string's heap buffer) is released here
  const auto second = std::allocate_shared<std::string>(RecyclingAllocator<std::string>{}, "reused");
  EXPECT_EQ(*second, "reused");
  EXPECT_EQ(second.get(), first_address);  // the same block, from the shelf
}

TEST(RecyclingAllocator, ObjectsMadeOnManyThreadsAreAllReleased) {
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<std::vector<int>>> made(64);
  for (int thread = 0; thread < 4; ++thread) {
    threads.emplace_back([&made, thread] {
      for (int index = thread; index < 64; index += 4) {
        made[static_cast<std::size_t>(index)] =
            std::allocate_shared<std::vector<int>>(RecyclingAllocator<std::vector<int>>{}, 10, index);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int index = 0; index < 64; ++index) {
    ASSERT_EQ(made[static_cast<std::size_t>(index)]->at(9), index);
  }
  made.clear();  // all given back on this thread: 32 kept, the rest freed
}

using ShortStrings = std::vector<std::string, ShortListAllocator<std::string, 4>>;

TEST(ShortListAllocator, AShortListReusesTheBlockOfTheLastOne) {
  const std::string* first_address = nullptr;
  {
    ShortStrings first;
    first.reserve(2);
    first.emplace_back(100, 'a');
    first_address = first.data();
  }
  ShortStrings second;
  second.reserve(3);  // any count up to the capacity takes a block of the capacity
  EXPECT_EQ(second.data(), first_address);
}

TEST(ShortListAllocator, AListKeepsItsElementsAsItOutgrowsTheBlock) {
  ShortStrings list;
  list.reserve(1);
  for (int index = 0; index < 40; ++index) list.push_back(std::string(50, static_cast<char>('a' + index % 26)));
  ASSERT_EQ(list.size(), 40U);
  for (int index = 0; index < 40; ++index) {
    EXPECT_EQ(list[static_cast<std::size_t>(index)], std::string(50, static_cast<char>('a' + index % 26)));
  }
  list.resize(2);
  list.shrink_to_fit();  // back into a short block: the long array goes back to the heap
  EXPECT_EQ(list[1], std::string(50, 'b'));
}

}  // namespace
}  // namespace meshcomm::detail
