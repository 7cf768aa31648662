// EagerStoreChoice over decision tables in local memory, driven as a mailbox would drive it: the
// decider records each operation as it finishes it, and a rank may publish operation n only
// once the decider has finished operation n - lag. Every rank must store each operation's payload
// the way the decider times it under, whatever the decider decides meanwhile.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "eager/eager_all_to_allv.hpp"
#include "eager/eager_store_choice.hpp"

namespace meshcomm::detail {
namespace {

constexpr int kLag = 4;
constexpr int kRanks = 3;

/// Every rank's decision table, zeroed, and each rank's choice over them.
struct Tables {
  std::array<std::array<std::uint64_t, EagerStoreChoice::kTableBytes / sizeof(std::uint64_t)>, kRanks> words{};
  std::vector<std::unique_ptr<EagerStoreChoice>> ranks;

  explicit Tables(bool measured = true, bool ranks_share_cores = false, PeerReads peer_reads = PeerReads::never,
                  std::size_t all_to_allv_capacity = std::numeric_limits<std::size_t>::max()) {
    std::vector<std::byte*> tables;
    for (auto& table : words) tables.push_back(reinterpret_cast<std::byte*>(table.data()));
    for (int rank = 0; rank < kRanks; ++rank) {
      ranks.push_back(std::make_unique<EagerStoreChoice>(tables, rank, kLag, measured, ranks_share_cores, peer_reads,
                                                         all_to_allv_capacity));
    }
  }
};

bool streams(const EagerStoreChoice& choice, const CollectiveArgs& args, std::size_t bytes, std::int64_t op) {
  return choice.way(args, bytes, op) == PayloadWay::streaming_stores;
}

CollectiveArgs broadcast_of(std::size_t bytes, int root) {
  CollectiveArgs args;
  args.kind = CollectiveKind::broadcast;
  args.output = BufferView(nullptr, bytes, DataType::u8);
  args.in_place = true;
  args.root = root;
  return args;
}

CollectiveArgs all_gather_of(std::size_t bytes) {
  CollectiveArgs args;
  args.kind = CollectiveKind::all_gather;
  args.input = BufferView(nullptr, bytes, DataType::u8);
  args.output = BufferView(nullptr, bytes * kRanks, DataType::u8);
  return args;
}

/// An all_to_allv of 3 ranks as rank `rank` sees it: each rank sends the rank after it `to_next`
/// bytes and the rank before it `to_previous`.
struct AllToAllvOf {
  std::array<std::size_t, kRanks> send_counts{}, recv_counts{}, offsets{};
  CollectiveArgs args;

  AllToAllvOf(int rank, std::size_t to_next, std::size_t to_previous) {
    send_counts[static_cast<std::size_t>((rank + 1) % kRanks)] = to_next;
    send_counts[static_cast<std::size_t>((rank + kRanks - 1) % kRanks)] = to_previous;
    recv_counts[static_cast<std::size_t>((rank + kRanks - 1) % kRanks)] = to_next;
    recv_counts[static_cast<std::size_t>((rank + 1) % kRanks)] = to_previous;
    args.kind = CollectiveKind::all_to_allv;
    args.input = BufferView(nullptr, to_next + to_previous, DataType::u8);
    args.output = BufferView(nullptr, to_next + to_previous, DataType::u8);
    args.layout = {.send_counts = send_counts, .send_offsets = offsets, .recv_counts = recv_counts,
                   .recv_offsets = offsets};
  }
};

/// How long each way of passing a payload on takes in a run.
struct WayTimes {
  std::int64_t plain = 0;
  std::int64_t streamed = 0;
  std::int64_t read = std::numeric_limits<std::int64_t>::max() / 4;  ///< left in the writer's buffer
  /// Operations through the slots right after reads that take twice their stores' time (they find
  /// the slots' lines as the reads left them).
  int slots_slower_for = 0;
};

/// Runs `operations` of `args` (publishing `bytes`) through `tables`, numbered from `first`,
/// where `writer` passes its payload on each way in `times`; returns, per operation, the way the
/// writer took, after checking that the writer saw the same way when it could first publish it as
/// its decider, the rank after it, saw when it finished it.
std::vector<PayloadWay> run_ways(Tables& tables, const CollectiveArgs& args, int operations, std::size_t bytes,
                                 int writer, WayTimes times, int first = 0) {
  const int decider = (writer + 1) % kRanks;
  std::vector<PayloadWay> ways;
  std::vector<int> since_reads;  // per operation: operations through the slots before it since a read
  for (int op = first; op < first + operations + kLag; ++op) {
    // The decider has finished op - lag: the writer may publish op now.
    if (op < first + operations) {
      ways.push_back(tables.ranks[writer]->way(args, bytes, op));
      const bool read = ways.back() == PayloadWay::read_from_writer;
      since_reads.push_back(read ? -1 : since_reads.empty() ? 0 : since_reads.back() + 1);
    }
    const int finishing = op - kLag + 1;  // the decider finishes this one before the writer publishes op + 1
    if (finishing < first || finishing >= first + operations) continue;
    const PayloadWay way = ways[static_cast<std::size_t>(finishing - first)];
    EXPECT_EQ(tables.ranks[writer]->way(args, bytes, finishing), way)
        << "operation " << finishing << " is timed under another way than it was stored";
    EXPECT_EQ(tables.ranks[decider]->decided_read_from_writer(args, bytes, finishing),
              way == PayloadWay::read_from_writer)
        << "operation " << finishing;
    EXPECT_EQ(tables.ranks[decider]->timed_writer(args), writer);
    EXPECT_TRUE(tables.ranks[decider]->decides(args, bytes));
    const auto stored = way == PayloadWay::streaming_stores ? times.streamed : times.plain;
    const bool after_reads = since_reads[static_cast<std::size_t>(finishing - first)] < times.slots_slower_for;
    const auto took = way == PayloadWay::read_from_writer ? times.read : after_reads ? 2 * stored : stored;
    tables.ranks[decider]->record(args, bytes, finishing, std::chrono::nanoseconds(took));
  }
  return ways;
}

/// run_ways() where the writer's payload is only stored: per operation, whether it was streamed.
std::vector<bool> run(Tables& tables, const CollectiveArgs& args, int operations, std::size_t bytes, int writer,
                      std::int64_t plain_nanoseconds, std::int64_t streamed_nanoseconds) {
  std::vector<bool> streamed;
  for (const PayloadWay way : run_ways(tables, args, operations, bytes, writer,
                                       {.plain = plain_nanoseconds, .streamed = streamed_nanoseconds})) {
    EXPECT_NE(way, PayloadWay::read_from_writer);
    streamed.push_back(way == PayloadWay::streaming_stores);
  }
  return streamed;
}

/// run() for broadcasts of `bytes` from `root`.
std::vector<bool> run(Tables& tables, int operations, std::size_t bytes, int root, std::int64_t plain_nanoseconds,
                      std::int64_t streamed_nanoseconds) {
  return run(tables, broadcast_of(bytes, root), operations, bytes, root, plain_nanoseconds, streamed_nanoseconds);
}

TEST(EagerStoreChoice, SettlesOnTheFasterWayAndEveryRankStoresAsTheDeciderTimes) {
  Tables tables;
  const std::size_t bytes = 64 * 1024;
  const auto streamed = run(tables, 400, bytes, 0, 8000, 5000);
  ASSERT_FALSE(streamed.front()) << "plain stores first";
  int changes = 0;
  for (std::size_t op = 1; op < streamed.size(); ++op) changes += streamed[op] != streamed[op - 1] ? 1 : 0;
  EXPECT_GE(changes, 1);
  EXPECT_TRUE(streamed.back()) << "the faster way, streamed, is taken in the end";
  int plain_late = 0;
  for (std::size_t op = 200; op < streamed.size(); ++op) plain_late += streamed[op] ? 0 : 1;
  EXPECT_LE(plain_late, 40) << "trials of plain stores are rare once the choice is made";
}

TEST(EagerStoreChoice, StaysPlainWherePlainIsFaster) {
  Tables tables;
  const auto streamed = run(tables, 400, 16 * 1024, 2, 2000, 3000);
  int streamed_late = 0;
  for (std::size_t op = 200; op < streamed.size(); ++op) streamed_late += streamed[op] ? 1 : 0;
  EXPECT_LE(streamed_late, 40);
  EXPECT_FALSE(streamed.back());
}

TEST(EagerStoreChoice, OnlyMeasuredKindsAndSizesStream) {
  Tables tables;
  run(tables, 100, 32 * 1024, 1, 8000, 2000);  // settles on streaming for this class and root
  auto args = broadcast_of(32 * 1024, 1);
  EXPECT_TRUE(streams(*tables.ranks[1], args, 32 * 1024, 200));
  EXPECT_FALSE(streams(*tables.ranks[1], broadcast_of(32 * 1024, 0), 32 * 1024, 200)) << "another root decides apart";
  EXPECT_FALSE(streams(*tables.ranks[1], broadcast_of(8 * 1024, 1), 8 * 1024, 200)) << "below kMeasuredFrom";
  args.kind = CollectiveKind::all_gather;
  EXPECT_FALSE(streams(*tables.ranks[1], args, 32 * 1024, 200)) << "each kind is decided apart";
  args.kind = CollectiveKind::reduce_scatter;
  EXPECT_FALSE(tables.ranks[0]->decides(args, 32 * 1024)) << "reductions are not measured";
  EXPECT_FALSE(tables.ranks[0]->times_writing(args, 32 * 1024));
  const auto small_gather = all_gather_of(8 * 1024);
  EXPECT_FALSE(tables.ranks[0]->decides(small_gather, 8 * 1024)) << "below kMeasuredFrom";
  EXPECT_FALSE(tables.ranks[0]->times_writing(small_gather, 8 * 1024));
  // An all-to-all's reader copies a size-th of each payload: 32 KiB over 3 ranks is below 16 KiB.
  args.kind = CollectiveKind::all_to_all;
  EXPECT_FALSE(tables.ranks[0]->decides(args, 32 * 1024)) << "blocks below kMeasuredFrom";
  EXPECT_TRUE(tables.ranks[0]->decides(args, 60 * 1024));

  Tables unmeasured(false);
  const auto broadcast = broadcast_of(64 * 1024, 0);
  EXPECT_FALSE(unmeasured.ranks[1]->decides(broadcast, 64 * 1024));
  EXPECT_FALSE(unmeasured.ranks[0]->times_writing(broadcast, 64 * 1024));
  EXPECT_FALSE(streams(*unmeasured.ranks[0], broadcast, 64 * 1024, 100));
  EXPECT_FALSE(unmeasured.ranks[0]->decides(all_gather_of(64 * 1024), 64 * 1024));

  Tables sharing_cores(true, true);
  EXPECT_TRUE(sharing_cores.ranks[1]->decides(broadcast, 64 * 1024)) << "broadcasts are measured";
  EXPECT_FALSE(sharing_cores.ranks[0]->decides(all_gather_of(64 * 1024), 64 * 1024))
      << "the copies of ranks that share cores are not";
  EXPECT_FALSE(sharing_cores.ranks[0]->times_writing(all_gather_of(64 * 1024), 64 * 1024));
}

TEST(EagerStoreChoice, EachRankOfAnAllGatherStoresAsTheRankAfterItDecides) {
  Tables tables;
  const std::size_t bytes = 64 * 1024;
  const auto args = all_gather_of(bytes);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(tables.ranks[rank]->times_writing(args, bytes)) << "rank " << rank;
    EXPECT_TRUE(tables.ranks[rank]->decides(args, bytes)) << "rank " << rank;
    EXPECT_EQ(tables.ranks[rank]->timed_writer(args), (rank + kRanks - 1) % kRanks);
  }
  // Rank 1's payloads read faster streamed, rank 2's plain: each settles on its own, after 128
  // plain pieces (the all-gather's first streamed ones come after them).
  const auto first = run(tables, args, 1000, bytes, 1, 8000, 5000);
  const auto second = run(tables, args, 1000, bytes, 2, 5000, 8000);
  auto streamed_among = [](const std::vector<bool>& ways, std::size_t from, std::size_t to) {
    int streamed = 0;
    for (std::size_t op = from; op < to; ++op) streamed += ways[op] ? 1 : 0;
    return streamed;
  };
  EXPECT_EQ(streamed_among(first, 0, 128), 0) << "plain stores first";
  EXPECT_GE(streamed_among(first, 500, 1000), 450);
  EXPECT_LE(streamed_among(second, 500, 1000), 50);
  EXPECT_FALSE(streams(*tables.ranks[0], args, bytes, 1000)) << "rank 0's decider has timed nothing";
}

TEST(EagerStoreChoice, AnAllToAllvIsClassedByTheBlockItsWriterSendsItsDecider) {
  Tables tables;
  // Every rank sends the rank after it, its decider, 40000 bytes and the rank before it 100; its
  // payload (a table and the blocks) is larger than either.
  const std::size_t published = 40000 + 100 + 512;
  for (int rank = 0; rank < kRanks; ++rank) {
    const AllToAllvOf call(rank, 40000, 100);
    EXPECT_TRUE(tables.ranks[rank]->times_writing(call.args, published)) << "rank " << rank;
    EXPECT_TRUE(tables.ranks[rank]->decides(call.args, published)) << "rank " << rank;
    EXPECT_FALSE(tables.ranks[rank]->times_writing(call.args, 512)) << "the blocks did not fit: only the table";
  }
  // Rank 1 decides rank 0's stores from the 40000 bytes it reads from it, whatever it publishes.
  const AllToAllvOf writer(0, 40000, 100);
  const AllToAllvOf decider(1, 40000, 100);
  for (int op = 0; op < 400; ++op) {
    tables.ranks[1]->record(decider.args, 600, op, std::chrono::nanoseconds(streams(*tables.ranks[0], 
                                                         writer.args, published, op) ? 3000 : 9000));
  }
  EXPECT_TRUE(streams(*tables.ranks[0], writer.args, published, 400 + kLag));
  EXPECT_FALSE(streams(*tables.ranks[0], AllToAllvOf(0, 20000, 100).args, 20100 + 512, 400 + kLag))
      << "another class is decided apart";
  EXPECT_FALSE(streams(*tables.ranks[0], AllToAllvOf(0, 100, 40000).args, published, 400 + kLag))
      << "where the decider is sent little, nothing is measured";
  EXPECT_FALSE(tables.ranks[1]->decides(AllToAllvOf(1, 100, 40000).args, published));

  Tables sharing_cores(true, true);
  EXPECT_FALSE(sharing_cores.ranks[0]->times_writing(writer.args, published));
}

TEST(EagerStoreChoice, TheRootTimesItsWritingAndTheNextRankDecides) {
  Tables tables;
  const auto args = broadcast_of(64 * 1024, 2);
  EXPECT_TRUE(tables.ranks[2]->times_writing(args, 64 * 1024));
  EXPECT_FALSE(tables.ranks[0]->times_writing(args, 64 * 1024));
  EXPECT_EQ(tables.ranks[0]->timed_writer(args), 2);
  EXPECT_TRUE(tables.ranks[0]->decides(args, 64 * 1024));
  EXPECT_FALSE(tables.ranks[2]->decides(args, 64 * 1024));
  EXPECT_FALSE(tables.ranks[1]->decides(args, 64 * 1024));
}

TEST(EagerStoreChoice, ExchangesReadFromTheWritersBufferPastTheSlotAndWithinItWhereMeasured) {
  constexpr auto kPast = EagerStoreChoice::kMeasuredUpTo + 64;
  Tables tables(true, false, PeerReads::automatic);
  auto& rank0 = *tables.ranks[0];
  EXPECT_EQ(rank0.way(all_gather_of(kPast), kPast, 0), PayloadWay::read_from_writer);
  EXPECT_FALSE(rank0.times_writing(all_gather_of(kPast), kPast)) << "a payload left in the buffer is not timed";
  // Within the slot reads come first from kReadFromWriterFrom a reader, measured against the
  // slots; below it the slots alone.
  constexpr auto kFrom = EagerStoreChoice::kReadFromWriterFrom;
  EXPECT_FALSE(rank0.reads_from_writer(all_gather_of(kFrom), kFrom)) << "within the slot it is measured";
  EXPECT_EQ(rank0.way(all_gather_of(kFrom), kFrom, 0), PayloadWay::read_from_writer) << "read first";
  EXPECT_EQ(rank0.way(all_gather_of(kFrom - 64), kFrom - 64, 0), PayloadWay::plain_stores) << "the slots alone";
  EXPECT_TRUE(rank0.times_writing(all_gather_of(kFrom - 64), kFrom - 64));
  // An all-to-all's reader copies a size-th of the payload: past the slot it is read from
  // kFrom a reader.
  auto all_to_all = all_gather_of(kRanks * kFrom);
  all_to_all.kind = CollectiveKind::all_to_all;
  static_assert(kRanks * kFrom > EagerStoreChoice::kMeasuredUpTo, "past the slot's payload");
  EXPECT_EQ(rank0.way(all_to_all, kRanks * kFrom, 0), PayloadWay::read_from_writer);
  EXPECT_FALSE(rank0.reads_from_writer(all_to_all, kRanks * kFrom - kRanks)) << "below kFrom a reader";
  // Within it a reader copies a size-th of the payload: 60 KiB over 3 ranks is below kFrom.
  auto small_all_to_all = all_gather_of(60 * 1024);
  small_all_to_all.kind = CollectiveKind::all_to_all;
  EXPECT_EQ(rank0.way(small_all_to_all, 60 * 1024, 0), PayloadWay::plain_stores);
  all_to_all.in_place = true;
  EXPECT_EQ(rank0.way(all_to_all, kRanks * kFrom, 0), PayloadWay::read_from_writer)
      << "in place each pair of ranks swaps its blocks between their buffers";
  // An all_to_allv's blocks within the slot are classed by the block to the decider.
  EXPECT_EQ(rank0.way(AllToAllvOf(0, 40000, 100).args, 40100 + 512, 0), PayloadWay::read_from_writer);
  EXPECT_EQ(rank0.way(AllToAllvOf(0, 20000, 100).args, 20100 + 512, 0), PayloadWay::plain_stores);
  EXPECT_EQ(rank0.way(broadcast_of(64 * 1024, 0), 64 * 1024, 0), PayloadWay::plain_stores)
      << "a broadcast's root would have to wait for its readers";
  EXPECT_FALSE(rank0.chooses(8));

  Tables sharing_cores(true, true, PeerReads::automatic);
  EXPECT_FALSE(sharing_cores.ranks[0]->reads_from_writer(all_gather_of(kPast), kPast))
      << "a rank that shares its core would wait for its readers' turns";
  EXPECT_EQ(sharing_cores.ranks[0]->way(all_to_all, kRanks * kFrom, 0), PayloadWay::read_from_writer)
      << "in place every rank lends and swaps alike, wherever the ranks run";

  Tables always(false, true, PeerReads::always);
  EXPECT_EQ(always.ranks[0]->way(all_gather_of(100), 100, 0), PayloadWay::read_from_writer) << "at any size";
  auto small_in_place = all_gather_of(kRanks * 100);
  small_in_place.kind = CollectiveKind::all_to_all;
  small_in_place.in_place = true;
  EXPECT_EQ(always.ranks[0]->way(small_in_place, kRanks * 100, 0), PayloadWay::read_from_writer)
      << "an all-to-all in place too, its blocks swapped";
  EXPECT_TRUE(always.ranks[0]->chooses(8));
  EXPECT_EQ(always.ranks[0]->way(broadcast_of(64 * 1024, 0), 64 * 1024, 0), PayloadWay::plain_stores);

  Tables never(true, false, PeerReads::never);
  EXPECT_EQ(never.ranks[0]->way(all_gather_of(kPast), kPast, 0), PayloadWay::plain_stores);
}

/// How many of `ways` from `from` on are `way`.
int count_from(const std::vector<PayloadWay>& ways, std::size_t from, PayloadWay way) {
  int count = 0;
  for (std::size_t op = from; op < ways.size(); ++op) count += ways[op] == way ? 1 : 0;
  return count;
}

TEST(EagerStoreChoice, AnExchangeWithinTheSlotIsReadFromTheWriterUntilTheSlotsMeasureFaster) {
  Tables tables(true, false, PeerReads::automatic);
  // Rank 2's payloads of 32 KiB a reader go faster through the slots: read first, then slots.
  const std::size_t large = EagerStoreChoice::kReadFromWriterFrom;
  const auto large_gather = all_gather_of(large);
  const auto to_slots =
      run_ways(tables, large_gather, 1000, large, 2, {.plain = 3000, .streamed = 8000, .read = 9000});
  EXPECT_EQ(to_slots.front(), PayloadWay::read_from_writer) << "read first";
  EXPECT_GE(count_from(to_slots, 500, PayloadWay::plain_stores), 450);
  EXPECT_LE(count_from(to_slots, 500, PayloadWay::read_from_writer), 50) << "reads are tried again, rarely";

  // Rank 1's read faster from its buffer: they stay there, the slots tried now and then.
  const auto stays = run_ways(tables, large_gather, 1000, large, 1, {.plain = 8000, .streamed = 9000, .read = 3000});
  EXPECT_GE(count_from(stays, 500, PayloadWay::read_from_writer), 450);
  EXPECT_GE(count_from(stays, 0, PayloadWay::plain_stores), 1) << "the slots were tried";

  // A speed that changes is followed: rank 2's from the slots back to reads.
  const auto reads_again =
      run_ways(tables, large_gather, 1000, large, 2, {.plain = 9000, .streamed = 9000, .read = 3000}, /*first=*/1000);
  EXPECT_GE(count_from(reads_again, 500, PayloadWay::read_from_writer), 450);

  // Below kReadFromWriterFrom a reader only the stores are chosen, however fast reads would be.
  const std::size_t small = large / 2;
  const auto small_ways =
      run_ways(tables, all_gather_of(small), 400, small, 0, {.plain = 8000, .streamed = 9000, .read = 10});
  EXPECT_EQ(count_from(small_ways, 0, PayloadWay::read_from_writer), 0);

  Tables never(true, false, PeerReads::never);
  const auto without_reads =
      run_ways(never, large_gather, 400, large, 1, {.plain = 8000, .streamed = 9000, .read = 10});
  EXPECT_EQ(count_from(without_reads, 0, PayloadWay::read_from_writer), 0)
      << "where no peer may read a writer's buffer";
}

// The slots' first operations after reads run slower than their next ones: a trial of them
// weighs the last of a lag's run of operations, past those.
TEST(EagerStoreChoice, SlotsSlowerOnlyRightAfterReadsAreStillTakenWhereFaster) {
  Tables tables(true, false, PeerReads::automatic);
  const std::size_t large = EagerStoreChoice::kReadFromWriterFrom;
  // The first timed operation through the slots comes a lag after they are taken, at twice their
  // 3000 ns, past the reads' 4000; from the sixth on they take 3000.
  const auto ways = run_ways(tables, all_gather_of(large), 1000, large, 2,
                             {.plain = 3000, .streamed = 8000, .read = 4000, .slots_slower_for = kLag + 2});
  EXPECT_EQ(ways.front(), PayloadWay::read_from_writer) << "read first";
  EXPECT_GE(count_from(ways, 500, PayloadWay::plain_stores), 450);
}

TEST(EagerStoreChoice, AnAllToAllvWhoseBlocksPassItsSlotIsReadFromTheWritersInput) {
  // Ranks sharing cores read nothing from their writers' buffers by the size a reader copies;
  // blocks past the slot, which would hand the call over, are read all the same.
  constexpr std::size_t kCapacity = 16 * 1024;
  const std::size_t table = all_to_allv_published_bytes(AllToAllvOf(0, 0, 0).args, 0, kCapacity);
  const std::size_t fitting = (kCapacity - table) / 2;
  Tables sharing_cores(true, true, PeerReads::automatic, kCapacity);
  auto& rank0 = *sharing_cores.ranks[0];
  const AllToAllvOf fits(0, fitting, fitting);
  const AllToAllvOf passes(0, fitting, fitting + 1);
  ASSERT_TRUE(all_to_allv_fits(fits.args, 0, kCapacity));
  ASSERT_FALSE(all_to_allv_fits(passes.args, 0, kCapacity));
  EXPECT_EQ(rank0.way(fits.args, kCapacity, 0), PayloadWay::plain_stores);
  EXPECT_TRUE(rank0.reads_from_writer(passes.args, table));
  EXPECT_EQ(rank0.way(passes.args, table, 0), PayloadWay::read_from_writer);
  auto in_place = passes.args;
  in_place.in_place = true;
  EXPECT_FALSE(rank0.reads_from_writer(in_place, table)) << "in place its blocks' room is the peers' landing";

  Tables never(true, true, PeerReads::never, kCapacity);
  EXPECT_FALSE(never.ranks[0]->reads_from_writer(passes.args, table)) << "where no peer may read it, it hands over";
}

}  // namespace
}  // namespace meshcomm::detail
