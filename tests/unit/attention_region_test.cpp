// visible_region: the part of a block attention worth computing, for the layouts the ring uses.

#include <gtest/gtest.h>

#include "attention/attention_region.hpp"
#include "attention/sequence_layout.hpp"

namespace meshcomm::layers {
namespace {

AttentionRegion region_between(SequenceLayout layout, int ranks, int query_rank, int key_rank, bool causal) {
  const auto queries = layout_positions(layout, 8 * static_cast<std::size_t>(ranks), ranks, query_rank);
  const auto keys = layout_positions(layout, 8 * static_cast<std::size_t>(ranks), ranks, key_rank);
  return visible_region(queries, keys, causal);
}

void expect_region(const AttentionRegion& region, std::size_t query_begin, std::size_t query_end,
                   std::size_t key_begin, std::size_t key_end) {
  EXPECT_EQ(region.query_begin, query_begin);
  EXPECT_EQ(region.query_end, query_end);
  EXPECT_EQ(region.key_begin, key_begin);
  EXPECT_EQ(region.key_end, key_end);
}

TEST(VisibleRegion, NotCausalIsEverything) {
  expect_region(region_between(SequenceLayout::contiguous, 4, 0, 3, false), 0, 8, 0, 8);
}

TEST(VisibleRegion, ContiguousCausal) {
  expect_region(region_between(SequenceLayout::contiguous, 4, 2, 1, true), 0, 8, 0, 8);  // earlier keys: all
  expect_region(region_between(SequenceLayout::contiguous, 4, 2, 2, true), 0, 8, 0, 8);  // the diagonal
  EXPECT_TRUE(region_between(SequenceLayout::contiguous, 4, 1, 2, true).empty());        // later keys: none
}

TEST(VisibleRegion, ZigzagCausalIsHalfOfEveryOffDiagonalBlock) {
  // Each rank holds two chunks of 4 rows: its early chunk r and its late chunk 2P-1-r.
  expect_region(region_between(SequenceLayout::zigzag, 4, 2, 1, true), 0, 8, 0, 4);  // keys' early chunk only
  expect_region(region_between(SequenceLayout::zigzag, 4, 1, 2, true), 4, 8, 0, 8);  // late queries only
  expect_region(region_between(SequenceLayout::zigzag, 4, 3, 3, true), 0, 8, 0, 8);
}

TEST(VisibleRegion, EmptyInputs) {
  EXPECT_TRUE(visible_region({}, std::vector<std::int64_t>{1, 2}, true).empty());
  EXPECT_EQ(AttentionRegion{}.query_rows(), 0U);
}

}  // namespace
}  // namespace meshcomm::layers
