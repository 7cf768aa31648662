// Pure rank arithmetic: no communicator involved.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "chunked_ring.hpp"
#include "dissemination_barrier.hpp"
#include "environment.hpp"
#include "meshcomm/error.hpp"
#include "patterns/collective_tags.hpp"
#include "patterns/pairwise.hpp"
#include "patterns/partition.hpp"
#include "patterns/recursive_doubling.hpp"

namespace meshcomm::detail {
namespace {

TEST(ChunkedRing, ChunksByBlockSizeOnHostAndWholeBlocksOnDevices) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  EXPECT_EQ(ring_chunk_count(0, MemoryKind::host), 1);
  EXPECT_EQ(ring_chunk_count(MiB / 2, MemoryKind::host), 1);
  EXPECT_EQ(ring_chunk_count(3 * MiB, MemoryKind::host), 3);
  EXPECT_EQ(ring_chunk_count(64 * MiB, MemoryKind::host), ring_max_chunks());
  EXPECT_EQ(ring_chunk_count(64 * MiB, MemoryKind::cuda), 1);
}

TEST(Dissemination, RoundsAndPeers) {
  EXPECT_EQ(dissemination_rounds(1), 0);
  EXPECT_EQ(dissemination_rounds(2), 1);
  EXPECT_EQ(dissemination_rounds(5), 3);
  EXPECT_EQ(dissemination_rounds(16), 4);
  for (int size : {2, 3, 7, 16}) {
    for (int round = 0; round < dissemination_rounds(size); ++round) {
      for (int rank = 0; rank < size; ++rank) {
        // Whoever rank sends to in a round hears from rank in that round.
        EXPECT_EQ(dissemination_recv_peer(dissemination_send_peer(rank, size, round), size, round), rank);
      }
    }
  }
  EXPECT_EQ(dissemination_send_peer(6, 7, 2), 3);
  EXPECT_EQ(dissemination_recv_peer(1, 7, 2), 4);
}

TEST(NeighbourTrades, AnAllToAllInPlaceEndsWithEveryBlockWhereItBelongs) {
  for (int size = 1; size <= 9; ++size) {
    // buffers[r][p] holds the block rank r has for rank p, as the number r * size + p; at the
    // end it must hold the block p had for r. Halves run in lockstep: copies aside, then every
    // send takes its bytes, then every receive lands.
    std::vector<std::vector<int>> buffers(static_cast<std::size_t>(size));
    for (int rank = 0; rank < size; ++rank) {
      for (int peer = 0; peer < size; ++peer) buffers[rank].push_back(rank * size + peer);
    }
    std::vector<int> aside(static_cast<std::size_t>(size), -1);
    std::vector<int> messages_between(static_cast<std::size_t>(size * size), 0);
    for (int half = 0; half < trade_halves(size); ++half) {
      std::map<std::pair<int, int>, int> in_flight;  // (from, to) -> the block sent
      for (int rank = 0; rank < size; ++rank) {
        const TradeHalf trade = trade_half(rank, size, half);
        if (trade.copy_aside >= 0) aside[rank] = buffers[rank][trade.copy_aside];
        if (trade.send_to < 0) continue;
        ASSERT_NE(trade.send_to, rank) << "size " << size << " half " << half;
        // A block sent from the buffer is not one this half receives into.
        ASSERT_TRUE(trade.send_aside || trade.send_to != trade.receive_from) << "size " << size << " half " << half;
        const int sent = trade.send_aside ? aside[rank] : buffers[rank][trade.send_to];
        ASSERT_TRUE(in_flight.emplace(std::pair(rank, trade.send_to), sent).second);
        ++messages_between[static_cast<std::size_t>(rank * size + trade.send_to)];
      }
      for (int rank = 0; rank < size; ++rank) {
        const TradeHalf trade = trade_half(rank, size, half);
        if (trade.receive_from < 0) continue;
        const auto message = in_flight.find(std::pair(trade.receive_from, rank));
        ASSERT_NE(message, in_flight.end()) << "size " << size << " half " << half << ": rank " << rank
                                            << " waits for rank " << trade.receive_from << ", which sends it nothing";
        buffers[rank][trade.receive_from] = message->second;
        in_flight.erase(message);
      }
      EXPECT_TRUE(in_flight.empty()) << "size " << size << " half " << half << ": a send nobody receives";
    }
    for (int rank = 0; rank < size; ++rank) {
      for (int peer = 0; peer < size; ++peer) {
        EXPECT_EQ(buffers[rank][peer], peer * size + rank) << "size " << size << ", rank " << rank << ", block " << peer;
        EXPECT_EQ(messages_between[static_cast<std::size_t>(rank * size + peer)], rank == peer ? 0 : 1);
      }
    }
  }
}

TEST(HalvingRound, PartnersSplitTheirSharedRangeAndEachKeepsItsOwnBlock) {
  for (int size : {1, 2, 4, 8, 16}) {
    for (int rank = 0; rank < size; ++rank) {
      int first = 0;
      int blocks = size;  // the range this rank still reduces
      for (int round = 0; round < doubling_rounds(size); ++round) {
        const auto step = halving_round(rank, size, round);
        const auto theirs = halving_round(step.peer, size, round);
        EXPECT_EQ(theirs.peer, rank);
        EXPECT_EQ(theirs.kept_first, step.given_first);
        EXPECT_EQ(theirs.given_first, step.kept_first);
        EXPECT_EQ(2 * step.span, blocks);
        EXPECT_EQ(std::min(step.kept_first, step.given_first), first);
        first = step.kept_first;
        blocks = step.span;
        EXPECT_LE(first, rank);
        EXPECT_LT(rank, first + blocks);
      }
      EXPECT_EQ(first, rank);
      EXPECT_EQ(blocks, 1);
    }
  }
}

TEST(Partition, BlocksOfJoinsNeighbouringBlocksIntoOneRange) {
  // 10 elements in 4 blocks: 3, 3, 2, 2.
  EXPECT_EQ(blocks_of(10, 4, 0, 2).offset, 0u);
  EXPECT_EQ(blocks_of(10, 4, 0, 2).count, 6u);
  EXPECT_EQ(blocks_of(10, 4, 2, 2).offset, 6u);
  EXPECT_EQ(blocks_of(10, 4, 2, 2).count, 4u);
  EXPECT_EQ(blocks_of(10, 4, 1, 1).count, 3u);
  EXPECT_EQ(blocks_of(10, 4, 0, 4).count, 10u);
  EXPECT_EQ(blocks_of(3, 4, 3, 1).count, 0u);  // fewer elements than blocks
}

TEST(Environment, ParsesDurations) {
  using std::chrono::milliseconds;
  EXPECT_EQ(parse_duration("30", "T"), milliseconds{30'000});
  EXPECT_EQ(parse_duration("2.5", "T"), milliseconds{2'500});
  EXPECT_EQ(parse_duration("500ms", "T"), milliseconds{500});
  EXPECT_EQ(parse_duration("2s", "T"), milliseconds{2'000});
  EXPECT_EQ(parse_duration("5m", "T"), milliseconds{300'000});
  for (const char* bad : {"", "abc", "-1", "0", "10 parsecs", "1e300", "nan"}) {
    try {
      (void)parse_duration(bad, "MESHCOMM_TIMEOUT");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("MESHCOMM_TIMEOUT"), std::string::npos);
      EXPECT_NE(std::string(error.what()).find("'500ms'"), std::string::npos) << "lists the valid forms";
    }
  }
}

TEST(Environment, ParsesByteCounts) {
  EXPECT_EQ(parse_byte_count("0", "B"), 0U);
  EXPECT_EQ(parse_byte_count("65536", "B"), 65536U);
  EXPECT_EQ(parse_byte_count("64K", "B"), std::size_t{64} << 10);
  EXPECT_EQ(parse_byte_count("3M", "B"), std::size_t{3} << 20);
  EXPECT_EQ(parse_byte_count("1023G", "B"), std::size_t{1023} << 30);
  for (const char* bad : {"", "K", "12Q", "-1", "1.5M", "4 K", "1024G", "1099511627776", "99999999999999999999999"}) {
    try {
      (void)parse_byte_count(bad, "MESHCOMM_STREAMING_COPY_BYTES");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(fmt::format("MESHCOMM_STREAMING_COPY_BYTES = '{}'", bad)),
                std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find("64K"), std::string::npos) << "lists the valid forms";
    }
  }
}

TEST(Environment, TimeoutPrecedence) {
  using std::chrono::milliseconds;
  EXPECT_EQ(resolve_timeout(milliseconds{1'234}), milliseconds{1'234});
  ::setenv("MESHCOMM_TIMEOUT", "7s", 1);
  EXPECT_EQ(resolve_timeout(milliseconds{0}), milliseconds{7'000});
  ::setenv("MESHCOMM_TIMEOUT", "soon", 1);
  EXPECT_THROW((void)resolve_timeout(milliseconds{0}), Error);
  ::unsetenv("MESHCOMM_TIMEOUT");
  EXPECT_EQ(resolve_timeout(milliseconds{0}), kDefaultTimeout);
}

}  // namespace
}  // namespace meshcomm::detail

namespace meshcomm::detail {
namespace {

TEST(CollectiveTags, WindowsLieAboveOrderedTagsAndApartByCallAndShape) {
  const auto shape = collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1000, ReduceOp::sum, 0);
  for (std::uint64_t call : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1023}, std::uint64_t{1} << 40}) {
    const int first = CollectiveTags::window(shape, call);
    EXPECT_GE(first, CollectiveTags::kFirst);
    EXPECT_LE(first + CollectiveTags::kSlots - 1, CollectiveTags::kLargest);
    EXPECT_EQ(first % CollectiveTags::kSlots, 0);
  }
  EXPECT_EQ(CollectiveTags::kLargest, (1 << 30) - 1);  // within every backend's 30-bit tags
  // The reserved tag lies outside the windows, and at the top of a backend with fewer tags.
  EXPECT_LT(CollectiveTags::reserved(CollectiveTags::kLargest), CollectiveTags::kFirst);
  EXPECT_EQ(CollectiveTags::reserved(32767), 32767);
  // A receiver tells a peer's message for the same call of another shape from any other message.
  const auto other_shape = collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1024, ReduceOp::sum, 0);
  EXPECT_TRUE(CollectiveTags::same_call_other_shape(CollectiveTags::window(shape, 7),
                                                    CollectiveTags::window(other_shape, 7) + 3));
  EXPECT_FALSE(CollectiveTags::same_call_other_shape(CollectiveTags::window(shape, 7), CollectiveTags::window(shape, 7) + 3));
  EXPECT_FALSE(CollectiveTags::same_call_other_shape(CollectiveTags::window(shape, 7),
                                                     CollectiveTags::window(other_shape, 8)));
  EXPECT_FALSE(CollectiveTags::same_call_other_shape(CollectiveTags::window(shape, 7), 12));
  // Consecutive calls of one shape, and the same call of another shape, never share a tag.
  EXPECT_NE(CollectiveTags::window(shape, 6), CollectiveTags::window(shape, 7));
  EXPECT_EQ(CollectiveTags::window(shape, 7), CollectiveTags::window(shape, 7 + 1024));  // the number wraps
  const std::uint64_t others[] = {
      collective_fingerprint(CollectiveKind::reduce_scatter, DataType::f32, 1000, ReduceOp::sum, 0),
      collective_fingerprint(CollectiveKind::all_gather, DataType::f64, 1000, ReduceOp::sum, 0),
      collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1024, ReduceOp::sum, 0),
      collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1000, ReduceOp::max, 0),
      collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1000, ReduceOp::sum, 1),
      collective_fingerprint(CollectiveKind::all_gather, DataType::f32, 1000, ReduceOp::sum, 0, true),
      barrier_fingerprint(),
  };
  for (std::uint64_t other : others) EXPECT_NE(CollectiveTags::window(other, 7), CollectiveTags::window(shape, 7));
}

}  // namespace
}  // namespace meshcomm::detail
