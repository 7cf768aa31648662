// The collective matrix over the mpi backend (native included), at the job's size.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "cases/collective_cases.hpp"
#include "cases/eager_cases.hpp"
#include "harness/mpi_world.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiCollectives, AllGather) { check_collective_matrix(mpi_world(), CollectiveKind::all_gather); }
TEST(MpiCollectives, ReduceScatter) { check_collective_matrix(mpi_world(), CollectiveKind::reduce_scatter); }
TEST(MpiCollectives, AllReduce) { check_collective_matrix(mpi_world(), CollectiveKind::all_reduce); }
TEST(MpiCollectives, AllToAll) { check_collective_matrix(mpi_world(), CollectiveKind::all_to_all); }
TEST(MpiCollectives, AllToAllv) { check_collective_matrix(mpi_world(), CollectiveKind::all_to_allv); }
TEST(MpiCollectives, Broadcast) { check_collective_matrix(mpi_world(), CollectiveKind::broadcast); }
TEST(MpiCollectives, EagerCallsRunAheadOfSlowRanks) { check_eager_calls_run_ahead(mpi_world()); }
TEST(MpiCollectives, EagerBroadcastsStoreBothWays) { check_eager_broadcasts_store_both_ways(mpi_world()); }
TEST(MpiCollectives, EagerBroadcastsInPieces) { check_eager_broadcasts_in_pieces(mpi_world()); }
TEST(MpiCollectives, EagerAllReducesInPieces) { check_eager_all_reduces_in_pieces(mpi_world()); }
TEST(MpiCollectives, EagerBroadcastsOfDataAtRest) { check_eager_broadcasts_of_data_at_rest(mpi_world()); }
TEST(MpiCollectives, EagerBroadcastsOfSharedBuffers) { check_eager_broadcasts_of_shared_buffers(mpi_world()); }
TEST(MpiCollectives, EagerCopiesStoreBothWays) { check_eager_copies_store_both_ways(mpi_world()); }
TEST(MpiCollectives, EagerAllToAllv) { check_eager_all_to_allv(mpi_world()); }
TEST(MpiCollectives, EagerAllToAllsInPlace) { check_eager_all_to_alls_in_place(mpi_world()); }
TEST(MpiCollectives, EagerBarrier) { check_eager_barrier(mpi_world()); }
TEST(MpiCollectives, EagerTimeoutNamesAMissingRank) { check_eager_timeout_names_a_missing_rank(mpi_world()); }
TEST(MpiCollectives, CountsThatWouldWrapAreRefused) { check_counts_that_would_wrap(mpi_world()); }
TEST(MpiCollectives, MismatchedCallsFailOnEveryRank) { check_mismatched_calls(mpi_world()); }
// The shm path on shared buffers with counts that differ by rank (1000 against 1024, and against
// 2^20, where a rank would read past a peer's segment): every rank fails, none crashes.
TEST(MpiCollectives, MismatchedCountsOnSharedBuffersFail) {
  auto& world = mpi_world();
  for (std::size_t other_count : {std::size_t{1024}, std::size_t{1} << 20}) {
    for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::broadcast,
                      CollectiveKind::all_to_all, CollectiveKind::all_reduce}) {
      auto comm = world.split(0, world.rank());
      const std::size_t count = comm.rank() == 0 ? 1000 : other_count;
      auto input = comm.allocate_shared(other_count * comm.size() * sizeof(float));
      auto output = comm.allocate_shared(other_count * comm.size() * sizeof(float));
      const auto in = input.as<float>(), out = output.as<float>();
      try {
        if (kind == CollectiveKind::all_gather) {
          comm.all_gather(std::span<const float>(in.first(count)), out.first(count * comm.size()), {.algorithm = "shm"})
              .wait(std::chrono::milliseconds(500));
        } else if (kind == CollectiveKind::broadcast) {
          comm.broadcast(out.first(count), {.root = 0, .algorithm = "shm"}).wait(std::chrono::milliseconds(500));
        } else if (kind == CollectiveKind::all_reduce) {
          comm.all_reduce(std::span<const float>(in.first(count)), out.first(count), {.algorithm = "shm"})
              .wait(std::chrono::milliseconds(500));
        } else if (kind == CollectiveKind::all_to_all) {
          comm.all_to_all(std::span<const float>(in.first(count * comm.size())), out.first(count * comm.size()),
                          {.algorithm = "shm"})
              .wait(std::chrono::milliseconds(500));
        } else {
          comm.reduce_scatter(std::span<const float>(in.first(count * comm.size())), out.first(count),
                              {.algorithm = "shm"})
              .wait(std::chrono::milliseconds(500));
        }
        ADD_FAILURE() << to_string(kind) << " " << count << " vs " << other_count << ": rank " << world.rank()
                      << " returned success";
      } catch (const Error& error) {
        // A timeout naming the peer, or the peer's descriptor for this call under another shape
        // (same size: invalid_argument).
        EXPECT_TRUE(error.code() == ErrorCode::timeout || error.code() == ErrorCode::size_mismatch ||
                    error.code() == ErrorCode::invalid_argument)
            << error.what();
        EXPECT_GE(error.context().peer, 0) << error.what();
      }
      world.barrier();
    }
  }
}

/// A world communicator created while MESHCOMM_DEBUG is `mode` (it is read as a communicator is
/// created).
Communicator world_with_debug(const char* mode) {
  ::setenv("MESHCOMM_DEBUG", mode, 1);
  MpiBootstrap bootstrap;
  auto comm = Communicator::create(bootstrap);
  ::unsetenv("MESHCOMM_DEBUG");
  return comm;
}

TEST(MpiCollectives, FingerprintExchangeNamesEveryRanksCall) {
  auto comm = world_with_debug("fingerprint");
  check_fingerprint_exchange(comm);
}

TEST(MpiCollectives, CallSiteExchangeCatchesASkippedCall) {
  auto comm = world_with_debug("callsite");
  check_call_site_exchange(comm);
}

}  // namespace
}  // namespace meshcomm::testing

namespace meshcomm::testing {
namespace {

/// The shm all-gather, reduce-scatter, all-reduce, all-to-all and broadcast, with
/// every rank's buffers in meshcomm shared memory (the single-copy path) or only rank 0's (every
/// rank hands the call over: rank 0 once it has heard from the others, the others at once). The two larger
/// counts take the copies and the reduction past the streaming threshold (256 KiB in these
/// tests, see mpi_main.cpp), the smaller ones stay below it, with blocks that start mid cache line.
void check_shm_collectives(bool only_rank_zero_shared) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  const bool shared = !only_rank_zero_shared || rank == 0;
  for (std::size_t count : {std::size_t{1}, std::size_t{4099}, std::size_t{1} << 16, (std::size_t{1} << 18) + 5}) {
    for (bool in_place : {false, true}) {
      auto shared_input = comm.allocate_shared(count * size * sizeof(float));
      auto shared_output = comm.allocate_shared(count * size * sizeof(float));
      std::vector<float> plain_input(count * size);
      std::vector<float> plain_output(count * size);
      const auto input = shared ? shared_input.as<float>().first(count * size) : std::span<float>(plain_input);
      const auto output = shared ? shared_output.as<float>().first(count * size) : std::span<float>(plain_output);
      // all_gather
      auto mine = in_place ? output.subspan(rank * count, count) : input.first(count);
      verifiable::fill(mine.data(), 0, count, DataType::f32, [&](std::size_t i) { return verifiable::payload(rank, 0, i); });
      comm.all_gather(std::span<const float>(mine), output, {.algorithm = "shm"}).wait();
      for (int from = 0; from < size; ++from) {
        EXPECT_EQ(verifiable::count_wrong(output.data(), from * count, count, DataType::f32,
                                          [&](std::size_t i) { return verifiable::payload(from, 0, i); }),
                  0U)
            << "all_gather from " << from << " count " << count << " in_place " << in_place;
      }
      // reduce_scatter
      verifiable::fill(input.data(), 0, count * size, DataType::f32,
                       [&](std::size_t i) { return verifiable::contribution(ReduceOp::sum, rank, i, size); });
      auto result = in_place ? input.subspan(rank * count, count) : output.first(count);
      comm.reduce_scatter(std::span<const float>(input), result, {.op = ReduceOp::sum, .algorithm = "shm"}).wait();
      EXPECT_EQ(verifiable::count_wrong(result.data(), 0, count, DataType::f32,
                                        [&](std::size_t i) { return verifiable::reduced(ReduceOp::sum, rank * count + i, size); }),
                0U)
          << "reduce_scatter count " << count << " in_place " << in_place;
      // all_reduce over count * size elements (shares of nearly equal size; uneven at 3 ranks)
      const std::size_t total = count * size;
      verifiable::fill(input.data(), 0, total, DataType::f32,
                       [&](std::size_t i) { return verifiable::contribution(ReduceOp::sum, rank, i, size); });
      auto reduced = in_place ? input : output;
      comm.all_reduce(std::span<const float>(input), reduced, {.op = ReduceOp::sum, .algorithm = "shm"}).wait();
      EXPECT_EQ(verifiable::count_wrong(reduced.data(), 0, total, DataType::f32,
                                        [&](std::size_t i) { return verifiable::reduced(ReduceOp::sum, i, size); }),
                0U)
          << "all_reduce count " << total << " in_place " << in_place;
      // all_to_all
      for (int to = 0; to < size; ++to) {
        verifiable::fill(input.data(), to * count, count, DataType::f32,
                         [&](std::size_t i) { return verifiable::payload(rank, to, i); });
      }
      auto exchanged = in_place ? input : output;
      comm.all_to_all(std::span<const float>(input), exchanged, {.algorithm = "shm"}).wait();
      for (int from = 0; from < size; ++from) {
        EXPECT_EQ(verifiable::count_wrong(exchanged.data(), from * count, count, DataType::f32,
                                          [&](std::size_t i) { return verifiable::payload(from, rank, i); }),
                  0U)
            << "all_to_all from " << from << " count " << count << " in_place " << in_place;
      }
      // broadcast (always in place), from the first and the last rank
      if (in_place) continue;
      for (int root : {0, size - 1}) {
        auto data = output.first(count);
        verifiable::fill(data.data(), 0, count, DataType::f32,
                         [&](std::size_t i) { return verifiable::payload(rank == root ? root : size + rank, 1, i); });
        comm.broadcast(data, {.root = root, .algorithm = "shm"}).wait();
        EXPECT_EQ(verifiable::count_wrong(data.data(), 0, count, DataType::f32,
                                          [&](std::size_t i) { return verifiable::payload(root, 1, i); }),
                  0U)
            << "broadcast from " << root << " count " << count;
      }
    }
  }
}

TEST(MpiCollectives, SharedMemorySingleCopy) { check_shm_collectives(false); }

/// The shm all-reduce on shared buffers in every dtype and reduction, out of place and in place,
/// over 4099 elements (at 3 ranks the first share holds one element more).
TEST(MpiCollectives, SharedMemoryAllReduceEveryTypeAndOp) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = 4099;
  auto input = comm.allocate_shared(count * sizeof(double));
  auto output = comm.allocate_shared(count * sizeof(double));
  for (auto type : {DataType::f32, DataType::f64, DataType::f16, DataType::bf16, DataType::i8, DataType::u8,
                    DataType::i32, DataType::u32, DataType::i64, DataType::u64}) {
    for (auto op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      for (bool in_place : {false, true}) {
        verifiable::fill(input.data(), 0, count, type,
                         [&](std::size_t i) { return verifiable::contribution(op, rank, i, size); });
        void* result = in_place ? input.data() : output.data();
        comm.all_reduce(ConstBufferView(input.data(), count, type), BufferView(result, count, type),
                        {.op = op, .algorithm = "shm"})
            .wait();
        EXPECT_EQ(verifiable::count_wrong(result, 0, count, type,
                                          [&](std::size_t i) { return verifiable::reduced(op, i, size); }),
                  0U)
            << to_string(type) << " " << to_string(op) << " in_place " << in_place;
      }
    }
  }
}

/// The shm all-reduce's shares stored both ways: in a size class no other test of this process
/// uses (8 MiB of f32 and a few elements more: uneven shares at 3 ranks), rank 0 has every rank
/// store them plain for the first two calls of each placement and streamed for the next two
/// (peer_read_store_choice(), measured apart in place and out of place). Six calls of each,
/// sums and averages by turns, every result checked exactly.
TEST(MpiCollectives, SharedMemoryAllReduceStoresBothWays) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = (std::size_t{1} << 21) + 3;
  auto input = comm.allocate_shared(count * sizeof(float));
  auto output = comm.allocate_shared(count * sizeof(float));
  for (bool in_place : {false, true}) {
    for (int call = 0; call < 6; ++call) {
      const auto op = call % 2 == 0 ? ReduceOp::sum : ReduceOp::avg;
      verifiable::fill(input.data(), 0, count, DataType::f32,
                       [&](std::size_t i) { return verifiable::contribution(op, rank, i + call, size); });
      void* result = in_place ? input.data() : output.data();
      comm.all_reduce(ConstBufferView(input.data(), count, DataType::f32), BufferView(result, count, DataType::f32),
                      {.op = op, .algorithm = "shm"})
          .wait();
      EXPECT_EQ(verifiable::count_wrong(result, 0, count, DataType::f32,
                                        [&](std::size_t i) { return verifiable::reduced(op, i + call, size); }),
                0U)
          << "call " << call << " " << to_string(op) << " in_place " << in_place;
    }
  }
}

/// The all-gather (both placements), all-to-all (out of place) and broadcast on shared buffers
/// whose outputs hold 1 MiB and a few elements more, by the shm path and by the table's choice
/// (at two ranks the eager path, which reads the peers' segments itself), eight calls each,
/// every result checked exactly. Where the streaming threshold lies above them
/// (mpi_shm_result_copies_np* set it to 64 MiB), their copies from the peers' memory take the
/// measured stores (copy_into_own_result): plain, then streamed, then the faster, with trials of
/// the other on an eighth of a copy; below it (the suite's 256 KiB) every such copy streams.
TEST(MpiCollectives, SharedBufferResultCopiesStoreEveryWay) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = (std::size_t{1} << 18) / static_cast<std::size_t>(size) + 7;  // a block, in floats
  const std::size_t total = count * static_cast<std::size_t>(size);
  auto input = comm.allocate_shared(total * sizeof(float));
  auto output = comm.allocate_shared(total * sizeof(float));
  const auto in = input.as<float>().first(total);
  const auto out = output.as<float>().first(total);
  auto payload_of = [](int from, int call) {
    return [from, call](std::size_t i) { return verifiable::payload(from, call, i); };
  };
  for (const char* algorithm : {"shm", ""}) {
    for (int call = 0; call < 8; ++call) {
      const auto where = fmt::format("call {} algorithm '{}'", call, algorithm);
      for (bool in_place : {false, true}) {
        auto mine = in_place ? out.subspan(rank * count, count) : in.first(count);
        verifiable::fill(mine.data(), 0, count, DataType::f32, payload_of(rank, call));
        comm.all_gather(std::span<const float>(mine), out, {.algorithm = algorithm}).wait();
        for (int from = 0; from < size; ++from) {
          EXPECT_EQ(verifiable::count_wrong(out.data(), from * count, count, DataType::f32, payload_of(from, call)), 0U)
              << "all_gather " << where << " from " << from << " in_place " << in_place;
        }
      }
      for (int to = 0; to < size; ++to) {
        verifiable::fill(in.data(), to * count, count, DataType::f32, payload_of(rank * size + to, call));
      }
      comm.all_to_all(std::span<const float>(in), out, {.algorithm = algorithm}).wait();
      for (int from = 0; from < size; ++from) {
        EXPECT_EQ(verifiable::count_wrong(out.data(), from * count, count, DataType::f32,
                                          payload_of(from * size + rank, call)),
                  0U)
            << "all_to_all " << where << " from " << from;
      }
      const int root = call % size;
      verifiable::fill(out.data(), 0, total, DataType::f32, payload_of(rank == root ? root : size + rank, call));
      comm.broadcast(out, {.root = root, .algorithm = algorithm}).wait();
      EXPECT_EQ(verifiable::count_wrong(out.data(), 0, total, DataType::f32, payload_of(root, call)), 0U)
          << "broadcast " << where << " from " << root;
    }
  }
}

/// The all-to-all in place on shared buffers of 1 MiB and a few elements more, as the table
/// picks it: `shm`, whose rank 0 measures its two phases against handing the call to its takeover
/// (the swaps between pairs of ranks at two to four ranks) and chooses for every rank, the first
/// two calls the phases and the next two the takeover. Ten calls, every result exact.
TEST(MpiCollectives, SharedMemoryAllToAllInPlaceTakesEitherWay) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = (std::size_t{1} << 18) / static_cast<std::size_t>(size) + 5;  // a block, in floats
  auto buffer = comm.allocate_shared(count * static_cast<std::size_t>(size) * sizeof(float));
  const auto data = buffer.as<float>().first(count * static_cast<std::size_t>(size));
  for (int call = 0; call < 10; ++call) {
    for (int to = 0; to < size; ++to) {
      verifiable::fill(data.data(), to * count, count, DataType::f32,
                       [&](std::size_t i) { return verifiable::payload(rank * size + to, call, i); });
    }
    comm.all_to_all(std::span<const float>(data), data).wait();
    for (int from = 0; from < size; ++from) {
      EXPECT_EQ(verifiable::count_wrong(data.data(), from * count, count, DataType::f32,
                                        [&](std::size_t i) { return verifiable::payload(from * size + rank, call, i); }),
                0U)
          << "call " << call << " from " << from;
    }
  }
}

/// All-reduces on plain buffers of 2 MiB and a few elements more, as the table picks them:
/// `shm`, which hands them over; at two and three ranks to the eager path or to its runner-up on
/// tags (the ring), as rank 0 measures and chooses for every rank (in a fresh size class the
/// first three calls of each placement take the eager path and the next three the ring). Out of
/// place and in place, ten calls each, started two at a time with a small eager all-reduce
/// between them, so that calls that take different ways are in flight together, and waited on
/// newest first. Every result exact.
TEST(MpiCollectives, PlainBufferAllReducesTakeEitherTakeover) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  constexpr std::size_t kLarge = (std::size_t{1} << 19) + 3;
  constexpr std::size_t kSmall = 100;
  struct Call {
    std::vector<float> input;
    std::vector<float> output;
    bool in_place;
    int salt;
    Work work;
  };
  auto start = [&](std::vector<Call>& calls, std::size_t count, bool in_place) {
    auto& call = calls.emplace_back(
        Call{std::vector<float>(count), std::vector<float>(in_place ? 0 : count), in_place, static_cast<int>(calls.size())});
    verifiable::fill(call.input.data(), 0, count, DataType::f32,
                     [&](std::size_t i) { return verifiable::contribution(ReduceOp::sum, rank, i + call.salt, size); });
    const std::span<float> output = in_place ? std::span<float>(call.input) : std::span<float>(call.output);
    call.work = comm.all_reduce(std::span<const float>(call.input), output, {.op = ReduceOp::sum});
  };
  for (bool in_place : {false, true}) {
    for (int pair = 0; pair < 5; ++pair) {
      std::vector<Call> calls;
      calls.reserve(3);
      start(calls, kLarge, in_place);
      start(calls, kSmall, in_place);
      start(calls, kLarge, in_place);
      for (auto call = calls.rbegin(); call != calls.rend(); ++call) {
        call->work.wait(std::chrono::seconds(60));
        const auto& result = call->in_place ? call->input : call->output;
        auto expected = [&](std::size_t i) { return verifiable::reduced(ReduceOp::sum, i + call->salt, size); };
        EXPECT_EQ(verifiable::count_wrong(result.data(), 0, result.size(), DataType::f32, expected), 0U)
            << "pair " << pair << " call " << call->salt << " of " << result.size() << " elements, in_place "
            << in_place;
      }
    }
  }
}

TEST(MpiCollectives, SharedMemoryFallsBackWhenOneRankIsNotShared) { check_shm_collectives(true); }

/// The shm all-reduce reserves its eager takeover behind its exchange of descriptors as it
/// starts, and every rank decides from the same descriptors whether it runs. Started before any
/// wait, with one rank late: shm all-reduces of 1 MiB and a piece's remainder on every rank's
/// shared buffers (the takeover skipped), on plain ones (taken over in pieces: a call that names
/// `shm` keeps the table's takeover), and on shared ones but the last rank's; out of place and in place; each
/// followed by more small eager all-reduces than the slots hold. Waited on newest first, every
/// result exact.
TEST(MpiCollectives, ShmAllReducesReserveTheirEagerTakeoverInCallOrder) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  constexpr std::size_t kLarge = (std::size_t{1} << 18) + 7;
  constexpr std::size_t kSmall = 100;
  constexpr int kSmallCalls = kEagerSlots + 2;  // more than the eager slots
  enum class Buffers { shared, plain, shared_but_last_rank };
  struct Call {
    std::span<float> input;
    std::span<float> output;
    int salt;
    Work work;
  };
  std::vector<SharedBuffer> segments;
  std::vector<std::vector<float>> plain;
  std::vector<Call> calls;
  auto buffer = [&](bool shared, std::size_t count) -> std::span<float> {
    if (shared) return segments.emplace_back(comm.allocate_shared(count * sizeof(float))).as<float>().first(count);
    return plain.emplace_back(count);
  };
  auto start = [&](std::span<float> input, std::span<float> output, const char* algorithm) {
    const int salt = static_cast<int>(calls.size());
    verifiable::fill(input.data(), 0, input.size(), DataType::f32,
                     [&](std::size_t i) { return verifiable::contribution(ReduceOp::sum, rank, i + salt, size); });
    auto work = comm.all_reduce(std::span<const float>(input), output, {.op = ReduceOp::sum, .algorithm = algorithm});
    calls.push_back({input, output, salt, std::move(work)});
  };
  if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (bool in_place : {false, true}) {
    for (auto buffers : {Buffers::shared, Buffers::plain, Buffers::shared_but_last_rank, Buffers::shared}) {
      const bool shared =
          buffers == Buffers::shared || (buffers == Buffers::shared_but_last_rank && rank != size - 1);
      auto input = buffer(shared, kLarge);
      start(input, in_place ? input : buffer(shared, kLarge), "shm");
      for (int small = 0; small < kSmallCalls; ++small) {
        auto data = buffer(false, kSmall);
        start(data, data, "eager");
      }
    }
  }
  for (auto call = calls.rbegin(); call != calls.rend(); ++call) {
    call->work.wait(std::chrono::seconds(60));
    const int salt = call->salt;
    auto expected = [&](std::size_t i) { return verifiable::reduced(ReduceOp::sum, i + salt, size); };
    EXPECT_EQ(verifiable::count_wrong(call->output.data(), 0, call->output.size(), DataType::f32, expected), 0U)
        << "call " << salt << " of " << call->output.size() << " elements";
  }
}

/// The all-gather, the all-to-all (in place too, its blocks swapped) and the all-to-allv at sizes
/// whose eager payloads their readers copy from the writers' buffers (32 KiB a reader at two
/// ranks; at every size under MESHCOMM_EAGER_PEER_READS=always), with every rank's buffers from
/// allocate_shared, which the readers copy through their own mapping of the writer's segment, or
/// only rank 0's (the others read by kernel copy), three floats into the segments. Every result
/// exact.
void check_eager_reads_of_shared_buffers(bool only_rank_zero_shared) {
  auto comm = mpi_world().split(0, mpi_world().rank());
  const int size = comm.size();
  const int rank = comm.rank();
  const auto ranks = static_cast<std::size_t>(size);
  const bool shared = !only_rank_zero_shared || rank == 0;
  constexpr std::size_t kOffset = 3;
  constexpr std::size_t kBlock = 8192;  // floats: 32 KiB from each writer to each reader
  auto shared_input = comm.allocate_shared((kBlock * ranks + kOffset) * sizeof(float));
  auto shared_output = comm.allocate_shared((kBlock * ranks + kOffset) * sizeof(float));
  std::vector<float> plain_input(kBlock * ranks), plain_output(kBlock * ranks);
  const auto input = shared ? shared_input.as<float>().subspan(kOffset, kBlock * ranks) : std::span<float>(plain_input);
  const auto output =
      shared ? shared_output.as<float>().subspan(kOffset, kBlock * ranks) : std::span<float>(plain_output);
  auto expect_blocks = [&](int call, std::string_view what) {
    for (int from = 0; from < size; ++from) {
      EXPECT_EQ(verifiable::count_wrong(output.data(), from * kBlock, kBlock, DataType::f32,
                                        [&](std::size_t i) { return verifiable::payload(from, call, i); }),
                0U)
          << what << " from rank " << from << " on rank " << rank;
    }
  };
  for (bool in_place : {false, true}) {
    auto mine = in_place ? output.subspan(rank * kBlock, kBlock) : input.first(kBlock);
    verifiable::fill(mine.data(), 0, kBlock, DataType::f32, [&](std::size_t i) { return verifiable::payload(rank, 0, i); });
    comm.all_gather(std::span<const float>(mine), output).wait(std::chrono::seconds(20));
    expect_blocks(0, in_place ? "all_gather in place" : "all_gather");
  }
  // Block `to` of each rank's input goes to rank `to`: the payload of (this rank, that rank).
  auto fill_blocks = [&] {
    for (int to = 0; to < size; ++to) {
      verifiable::fill(input.data(), to * kBlock, kBlock, DataType::f32,
                       [&](std::size_t i) { return verifiable::payload(rank, 1 + to, i); });
    }
  };
  auto expect_exchanged = [&](std::string_view what) {
    for (int from = 0; from < size; ++from) {
      EXPECT_EQ(verifiable::count_wrong(output.data(), from * kBlock, kBlock, DataType::f32,
                                        [&](std::size_t i) { return verifiable::payload(from, 1 + rank, i); }),
                0U)
          << what << " from rank " << from << " on rank " << rank;
    }
  };
  fill_blocks();
  comm.all_to_all(std::span<const float>(input), output).wait(std::chrono::seconds(20));
  expect_exchanged("all_to_all");
  // In place each pair of ranks swaps its blocks between their buffers, by kernel copies into
  // the segments too.
  std::copy(input.begin(), input.end(), output.begin());
  comm.all_to_all(std::span<const float>(output), output).wait(std::chrono::seconds(20));
  expect_exchanged("all_to_all in place");
  std::vector<std::size_t> counts(ranks, kBlock), offsets(ranks);
  for (std::size_t peer = 0; peer < ranks; ++peer) offsets[peer] = peer * kBlock;
  std::fill(output.begin(), output.end(), -1.0F);
  comm.all_to_allv(std::span<const float>(input), output, {counts, offsets, counts, offsets})
      .wait(std::chrono::seconds(20));
  expect_exchanged("all_to_allv");
  mpi_world().barrier();
}

TEST(MpiCollectives, EagerReadsOfSharedBuffers) { check_eager_reads_of_shared_buffers(false); }
TEST(MpiCollectives, EagerReadsOfSharedAndPlainBuffers) { check_eager_reads_of_shared_buffers(true); }

}  // namespace
}  // namespace meshcomm::testing
