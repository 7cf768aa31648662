// The eager all_to_allv's slot payload (collectives/eager/eager_all_to_allv.hpp): what fits a
// slot, that the blocks written into payloads, plain or streamed, or left in the writers'
// inputs, are read back exactly where the tables say, and when a rank hands a call over at once.

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "eager/eager_all_to_allv.hpp"

namespace meshcomm::detail {
namespace {

constexpr int kRanks = 3;

/// Rank `rank`'s all_to_allv of bytes among `Ranks`: it sends rank p `counts(rank, p)` bytes, its
/// blocks packed in peer order in its input, and receives into its output packed alike.
template <class Counts, int Ranks = kRanks>
struct Call {
  std::array<std::size_t, Ranks> send_counts{}, send_offsets{}, recv_counts{}, recv_offsets{};
  std::vector<std::uint8_t> input, output;
  CollectiveArgs args;

  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  Call(int rank, Counts counts) {
    for (int peer = 0; peer < Ranks; ++peer) {
      send_counts[static_cast<std::size_t>(peer)] = counts(rank, peer);
      recv_counts[static_cast<std::size_t>(peer)] = counts(peer, rank);
    }
    std::exclusive_scan(send_counts.begin(), send_counts.end(), send_offsets.begin(), std::size_t{0});
    std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_offsets.begin(), std::size_t{0});
    input.resize(send_offsets.back() + send_counts.back());
    output.assign(recv_offsets.back() + recv_counts.back(), 0);
    for (int peer = 0; peer < Ranks; ++peer) {
      for (std::size_t i = 0; i < send_counts[static_cast<std::size_t>(peer)]; ++i) {
        input[send_offsets[static_cast<std::size_t>(peer)] + i] = value(rank, peer, i);
      }
    }
    args.kind = CollectiveKind::all_to_allv;
    args.input = BufferView(input.data(), input.size(), DataType::u8);
    args.output = BufferView(output.data(), output.size(), DataType::u8);
    args.layout = {.send_counts = send_counts, .send_offsets = send_offsets, .recv_counts = recv_counts,
                   .recv_offsets = recv_offsets};
  }

  static std::uint8_t value(int from, int to, std::size_t i) {
    return static_cast<std::uint8_t>(31 * from + 7 * to + i * 13 + i / 251);
  }
};

TEST(EagerAllToAllv, ARanksOwnBlockTakesNoRoomInItsSlot) {
  constexpr std::size_t kCapacity = 64 * 1024;
  // Rank 0 sends itself 45000 bytes and each peer 12000: 69000 in all, more than a slot holds;
  // its slot holds the 24000 of the peers' blocks and its table.
  auto counts = [](int from, int to) -> std::size_t { return from == to && from == 0 ? 45000 : 12000; };
  const Call call(0, counts);
  EXPECT_TRUE(all_to_allv_fits(call.args, 0, kCapacity));
  const std::size_t published = all_to_allv_published_bytes(call.args, 0, kCapacity);
  EXPECT_GE(published, 24000U);
  EXPECT_LT(published, 24000U + 1024) << "the table and the peers' blocks only";
  // Where the peers' blocks overflow the slot, only the table is written.
  auto large = [](int from, int to) -> std::size_t { return from != to ? 33000 : 8; };
  const Call overflowing(1, large);
  EXPECT_FALSE(all_to_allv_fits(overflowing.args, 1, kCapacity));
  EXPECT_LT(all_to_allv_published_bytes(overflowing.args, 1, kCapacity), 1024U);
}

TEST(EagerAllToAllv, TwoRanksAndRanksSharingCoresWriteFewerBlockBytes) {
  constexpr std::size_t kPayload = 64 * 1024;
  EXPECT_EQ(all_to_allv_capacity(3, false, kPayload), kPayload);
  for (const auto& [ranks, share_cores, blocks] :
       {std::tuple(2, false, kTwoRankBlockBytes), std::tuple(2, true, kTwoRankBlockBytes),
        std::tuple(4, true, kSharedCoresBlockBytes)}) {
    const std::size_t capacity = all_to_allv_capacity(ranks, share_cores, kPayload);
    EXPECT_GE(capacity, blocks) << ranks << " ranks";
    EXPECT_LT(capacity, blocks + 1024) << ranks << " ranks: the blocks and a table";
  }
  // Of two ranks, one sending kTwoRankBlockBytes fits, one sending a byte more does not.
  auto at_most = [](int from, int to) -> std::size_t { return from != to ? kTwoRankBlockBytes : 50000; };
  auto over = [](int from, int to) -> std::size_t { return from != to ? kTwoRankBlockBytes + 1 : 8; };
  std::array<std::size_t, 2> send{}, recv{}, offsets{};
  CollectiveArgs args;
  args.kind = CollectiveKind::all_to_allv;
  args.input = BufferView(nullptr, 1, DataType::u8);
  args.layout = {.send_counts = send, .send_offsets = offsets, .recv_counts = recv, .recv_offsets = offsets};
  const std::size_t capacity = all_to_allv_capacity(2, false, kPayload);
  send = {at_most(0, 0), at_most(0, 1)};
  EXPECT_TRUE(all_to_allv_fits(args, 0, capacity));
  send = {over(0, 0), over(0, 1)};
  EXPECT_FALSE(all_to_allv_fits(args, 0, capacity));
}

TEST(EagerAllToAllv, BlocksAreReadBackExactlyWhereTheTablesSay) {
  constexpr std::size_t kCapacity = 64 * 1024;
  auto counts = [](int from, int to) -> std::size_t { return 1000 * static_cast<std::size_t>(1 + from + 2 * to) + 3; };
  for (auto way : {PayloadWay::plain_stores, PayloadWay::streaming_stores, PayloadWay::read_from_writer}) {
    std::deque<Call<decltype(counts)>> calls;  // grows without moving a call: its layout points into it
    std::vector<std::vector<std::byte>> payloads(kRanks, std::vector<std::byte>(kCapacity));
    std::array<const std::byte*, kRanks> every{};
    for (int rank = 0; rank < kRanks; ++rank) {
      calls.emplace_back(rank, counts);
      write_all_to_allv(payloads[static_cast<std::size_t>(rank)].data(), calls.back().args, rank, kCapacity, way);
      every[static_cast<std::size_t>(rank)] = payloads[static_cast<std::size_t>(rank)].data();
    }
    ASSERT_TRUE(all_to_allv_published_everywhere(every));
    for (int rank = 0; rank < kRanks; ++rank) {
      auto& call = calls[static_cast<std::size_t>(rank)];
      ASSERT_FALSE(all_to_allv_mismatch(every, call.args, rank, {}).has_value());
      for (int from = 0; from < kRanks; ++from) {
        if (from == rank) continue;
        const auto& writer = calls[static_cast<std::size_t>(from)];
        const std::byte* base = way == PayloadWay::read_from_writer
                                    ? reinterpret_cast<const std::byte*>(writer.input.data())
                                    : every[static_cast<std::size_t>(from)];
        const std::size_t bytes = call.recv_counts[static_cast<std::size_t>(from)];
        std::memcpy(call.output.data() + call.recv_offsets[static_cast<std::size_t>(from)],
                    base + all_to_allv_block_at(every, from, rank), bytes);
        for (std::size_t i = 0; i < bytes; ++i) {
          ASSERT_EQ(call.output[call.recv_offsets[static_cast<std::size_t>(from)] + i], call.value(from, rank, i))
              << "byte " << i << " from rank " << from << " on rank " << rank << ", way " << static_cast<int>(way);
        }
      }
    }
  }
}

TEST(EagerAllToAllv, SmallCallsTakeTheCompactFormBesideFullTablesAndReadBackWhereTheySay) {
  constexpr std::size_t kCapacity = 64 * 1024;
  constexpr std::size_t kRoom = 32;  // a slot's inline bytes
  // Rank 0 sends rank 1 300 bytes, past a compact entry, so that both write the full table; rank 2
  // sends and expects 1-9 bytes a peer: a compact table of 1 + 2 * 2 bytes, then 3 + 6 of blocks.
  auto counts = [](int from, int to) -> std::size_t {
    return from == 0 && to == 1 ? 300 : static_cast<std::size_t>(1 + from + 3 * to);
  };
  std::deque<Call<decltype(counts)>> calls;
  std::vector<std::vector<std::byte>> payloads(kRanks, std::vector<std::byte>(kCapacity));
  std::array<const std::byte*, kRanks> every{};
  for (int rank = 0; rank < kRanks; ++rank) {
    calls.emplace_back(rank, counts);
    std::byte* payload = payloads[static_cast<std::size_t>(rank)].data();
    const std::size_t compact = compact_all_to_allv_bytes(calls.back().args, rank, kRoom);
    EXPECT_EQ(compact, rank == 2 ? 14U : 0U) << "rank " << rank;
    if (compact != 0) {
      write_compact_all_to_allv(payload, calls.back().args, rank);
    } else {
      write_all_to_allv(payload, calls.back().args, rank, kCapacity, PayloadWay::plain_stores);
    }
    every[static_cast<std::size_t>(rank)] = payload;
    EXPECT_EQ(all_to_allv_compact(payload), rank == 2) << "rank " << rank;
  }
  EXPECT_EQ(compact_all_to_allv_bytes(calls[2].args, 2, 13), 0U) << "14 bytes do not fit 13";
  EXPECT_TRUE(all_to_allv_published_everywhere(every));
  EXPECT_FALSE(all_to_allv_handed_over_early(every[2]));
  for (int rank = 0; rank < kRanks; ++rank) {
    auto& call = calls[static_cast<std::size_t>(rank)];
    ASSERT_FALSE(all_to_allv_mismatch(every, call.args, rank, {}).has_value()) << "rank " << rank;
    for (int from = 0; from < kRanks; ++from) {
      if (from == rank) continue;
      const std::size_t bytes = call.recv_counts[static_cast<std::size_t>(from)];
      std::memcpy(call.output.data() + call.recv_offsets[static_cast<std::size_t>(from)],
                  every[static_cast<std::size_t>(from)] + all_to_allv_block_at(every, from, rank), bytes);
      for (std::size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(call.output[call.recv_offsets[static_cast<std::size_t>(from)] + i], call.value(from, rank, i))
            << "byte " << i << " from rank " << from << " on rank " << rank;
      }
    }
  }
  // Rank 2's compact table says it sends rank 0 4 bytes where rank 0 expects 3: both name it.
  auto one_more = [](int from, int to) -> std::size_t {
    return from == 0 && to == 1 ? 300 : static_cast<std::size_t>(1 + from + 3 * to + (from == 2 && to == 0 ? 1 : 0));
  };
  const Call disagreeing(2, one_more);
  std::vector<std::byte> disagreeing_payload(kRoom);
  ASSERT_NE(compact_all_to_allv_bytes(disagreeing.args, 2, kRoom), 0U);
  write_compact_all_to_allv(disagreeing_payload.data(), disagreeing.args, 2);
  every[2] = disagreeing_payload.data();
  const auto mismatch = all_to_allv_mismatch(every, calls[0].args, 0, {});
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->code(), ErrorCode::size_mismatch);
  EXPECT_EQ(mismatch->context().peer, 2);
  EXPECT_NE(std::string(mismatch->what()).find("rank 2 sends 4 bytes to rank 0, which expects 3"), std::string::npos)
      << mismatch->what();
  EXPECT_FALSE(all_to_allv_mismatch(every, calls[1].args, 1, {}).has_value()) << "rank 1's blocks agree";
}

TEST(EagerAllToAllv, TwoRanksWriteShortTablesBesideCompactAndFullOnesAndReadBackWhereTheySay) {
  constexpr std::size_t kCapacity = 40 * 1024 + 64;
  constexpr std::size_t kRoom = 32;      // a slot's inline bytes
  constexpr std::size_t kBlockAt = 96;   // from the inline bytes to the payload past the header
  constexpr std::size_t kPayload = 64 * 1024;
  // Each case: what rank 0 and rank 1 send each other, and the form each writes.
  enum class Form { compact, short_table, full };
  struct Case {
    std::size_t from_0, from_1;
    Form form_0, form_1;
  };
  // 3 + 28 bytes fill the inline bytes but one, 3 + 30 pass them; 40000 bytes fit a two-rank
  // slot, 50000 do not.
  for (const Case& each : {Case{28, 30, Form::compact, Form::short_table},
                           Case{300, 8, Form::short_table, Form::short_table},
                           Case{40000, 20000, Form::short_table, Form::short_table},
                           Case{50000, 100, Form::full, Form::short_table}}) {
    auto counts = [each](int from, int to) -> std::size_t {
      if (from == to) return 5;
      return from == 0 ? each.from_0 : each.from_1;
    };
    std::deque<Call<decltype(counts), 2>> calls;
    std::vector<std::vector<std::byte>> payloads(2, std::vector<std::byte>(kPayload + kBlockAt));
    std::array<const std::byte*, 2> every{};
    for (int rank = 0; rank < 2; ++rank) {
      calls.emplace_back(rank, counts);
      const auto& args = calls.back().args;
      std::byte* payload = payloads[static_cast<std::size_t>(rank)].data();
      const Form form = rank == 0 ? each.form_0 : each.form_1;
      const bool compact = compact_all_to_allv_bytes(args, rank, kRoom) != 0;
      const bool short_table = short_all_to_allv_table_fits(args, rank, kCapacity);
      ASSERT_EQ(compact, form == Form::compact) << each.from_0 << "/" << each.from_1 << " B, rank " << rank;
      ASSERT_EQ(short_table, form != Form::full) << each.from_0 << "/" << each.from_1 << " B, rank " << rank;
      if (form == Form::compact) {
        write_compact_all_to_allv(payload, args, rank);
      } else if (form == Form::short_table) {
        write_short_all_to_allv(payload, kBlockAt, args, rank, PayloadWay::plain_stores);
      } else {
        write_all_to_allv(payload, args, rank, kCapacity, PayloadWay::plain_stores);
      }
      every[static_cast<std::size_t>(rank)] = payload;
      EXPECT_EQ(all_to_allv_table_inline(payload), form != Form::full);
      EXPECT_FALSE(all_to_allv_handed_over_early(payload));
    }
    for (int rank = 0; rank < 2; ++rank) {
      ASSERT_FALSE(all_to_allv_mismatch(every, calls[static_cast<std::size_t>(rank)].args, rank, {}).has_value());
    }
    if (each.form_0 == Form::full) {
      EXPECT_FALSE(all_to_allv_published_everywhere(every)) << "rank 0's blocks overflowed";
      continue;
    }
    ASSERT_TRUE(all_to_allv_published_everywhere(every));
    for (int rank = 0; rank < 2; ++rank) {
      auto& call = calls[static_cast<std::size_t>(rank)];
      const int from = 1 - rank;
      const std::size_t bytes = call.recv_counts[static_cast<std::size_t>(from)];
      std::memcpy(call.output.data() + call.recv_offsets[static_cast<std::size_t>(from)],
                  every[static_cast<std::size_t>(from)] + all_to_allv_block_at(every, from, rank), bytes);
      for (std::size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(call.output[call.recv_offsets[static_cast<std::size_t>(from)] + i], call.value(from, rank, i))
            << "byte " << i << " from rank " << from << " of " << each.from_0 << "/" << each.from_1 << " B";
      }
    }
  }
  // Where a slot held more, two bytes would still bound a short table's counts.
  constexpr std::size_t kLarge = 1 << 20;
  auto largest = [](int from, int to) -> std::size_t { return from == to ? 0 : 65535; };
  auto one_past = [](int from, int to) -> std::size_t { return from == to ? 0 : 65535 + static_cast<std::size_t>(to); };
  EXPECT_TRUE(short_all_to_allv_table_fits(Call<decltype(largest), 2>(0, largest).args, 0, kLarge)) << "65535 B";
  EXPECT_FALSE(short_all_to_allv_table_fits(Call<decltype(one_past), 2>(0, one_past).args, 0, kLarge))
      << "65536 B sent";
  EXPECT_FALSE(short_all_to_allv_table_fits(Call<decltype(one_past), 2>(1, one_past).args, 1, kLarge))
      << "65536 B expected";
  // A short table that disagrees with its peer's counts fails both, naming the counts.
  auto sent = [](int from, int to) -> std::size_t { return from == to ? 0 : 1000 + static_cast<std::size_t>(from); };
  auto one_more = [](int from, int to) -> std::size_t { return from == to ? 0 : 1002; };
  const Call<decltype(sent), 2> rank_0(0, sent);
  const Call<decltype(one_more), 2> rank_1(1, one_more);  // sends 1002 where rank 0 expects 1001
  std::vector<std::byte> payload_0(2048), payload_1(2048);
  write_short_all_to_allv(payload_0.data(), kBlockAt, rank_0.args, 0, PayloadWay::streaming_stores);
  write_short_all_to_allv(payload_1.data(), kBlockAt, rank_1.args, 1, PayloadWay::plain_stores);
  const std::array<const std::byte*, 2> disagreeing{payload_0.data(), payload_1.data()};
  const auto mismatch = all_to_allv_mismatch(disagreeing, rank_0.args, 0, {});
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->code(), ErrorCode::size_mismatch);
  EXPECT_NE(std::string(mismatch->what()).find("rank 1 sends 1002 bytes to rank 0, which expects 1001"),
            std::string::npos)
      << mismatch->what();
  // The streamed block reads back too.
  EXPECT_EQ(all_to_allv_block_at(disagreeing, 0, 1), kBlockAt);
  for (std::size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(std::to_integer<std::uint8_t>(payload_0[kBlockAt + i]), rank_0.value(0, 1, i)) << "byte " << i;
  }
}

TEST(EagerAllToAllv, AfterAnOverflowARankHandsLikeCallsOverAtOnceUntilOneNeedNotBe) {
  constexpr std::size_t kCapacity = 64 * 1024;
  // Rank 0 sends each peer 40000 bytes, past its slot; the others send 9000 and 9001.
  auto overflowing = [](int from, int to) -> std::size_t { return from == 0 ? 40000 : 9000 + (to == 0 ? 1 : 0); };
  auto fitting = [](int from, int to) -> std::size_t { return from == 0 ? 20000 : 9000 + (to == 0 ? 1 : 0); };
  auto smaller = [](int from, int to) -> std::size_t { return from == 0 ? 20000 : 4000 + (to == 0 ? 1 : 0); };
  auto a_little_smaller = [](int from, int /*to*/) -> std::size_t { return from == 0 ? 20000 : 8500; };
  // Every rank's payload of `counts`, rank `early` (if any) handing the call over at once.
  struct Round {
    std::deque<Call<std::size_t (*)(int, int)>> calls;
    std::vector<std::vector<std::byte>> payloads;
    std::array<const std::byte*, kRanks> every{};
  };
  auto round_of = [&](std::size_t (*counts)(int, int), int early) {
    auto round = std::make_unique<Round>();
    round->payloads.assign(kRanks, std::vector<std::byte>(kCapacity));
    for (int rank = 0; rank < kRanks; ++rank) {
      round->calls.emplace_back(rank, counts);
      write_all_to_allv(round->payloads[static_cast<std::size_t>(rank)].data(), round->calls.back().args, rank,
                        kCapacity, PayloadWay::plain_stores, rank == early);
      round->every[static_cast<std::size_t>(rank)] = round->payloads[static_cast<std::size_t>(rank)].data();
    }
    return round;
  };
  AllToAllvOverflowForecast forecast(kCapacity);  // rank 1's
  const auto first = round_of(overflowing, -1);
  EXPECT_FALSE(forecast.hands_over(first->calls[1].args, 1)) << "nothing seen yet";
  EXPECT_FALSE(all_to_allv_published_everywhere(first->every)) << "rank 0's blocks overflowed";
  forecast.learn(first->every, first->calls[1].args, 1);
  EXPECT_TRUE(forecast.hands_over(first->calls[1].args, 1));
  const auto fits_now = round_of(fitting, -1);
  EXPECT_TRUE(all_to_allv_published_everywhere(fits_now->every));
  EXPECT_TRUE(forecast.hands_over(fits_now->calls[1].args, 1)) << "rank 1 sends what it sent then";
  // Rank 0's 80000 bytes then, scaled by rank 1's 17000 now against its 18001 then, still overflow;
  // scaled by 8001, they would fit.
  EXPECT_TRUE(forecast.hands_over(round_of(a_little_smaller, -1)->calls[1].args, 1));
  EXPECT_FALSE(forecast.hands_over(round_of(smaller, -1)->calls[1].args, 1));
  // Rank 1 hands the fitting call over at once: its table alone, and every rank hands it over.
  const auto handed_over = round_of(fitting, 1);
  EXPECT_TRUE(all_to_allv_handed_over_early(handed_over->every[1]));
  EXPECT_FALSE(all_to_allv_handed_over_early(handed_over->every[0]));
  EXPECT_FALSE(all_to_allv_published_everywhere(handed_over->every));
  EXPECT_FALSE(all_to_allv_mismatch(handed_over->every, handed_over->calls[2].args, 2, {}).has_value());
  // No rank's blocks overflowed that call: the next one tries the slots again.
  forecast.learn(handed_over->every, handed_over->calls[1].args, 1);
  EXPECT_FALSE(forecast.hands_over(fits_now->calls[1].args, 1));
  forecast.learn(first->every, first->calls[1].args, 1);
  forecast.learn(fits_now->every, fits_now->calls[1].args, 1);
  EXPECT_FALSE(forecast.hands_over(fits_now->calls[1].args, 1)) << "the last call fitted everywhere";
}

}  // namespace
}  // namespace meshcomm::detail
