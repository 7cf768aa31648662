// Point-to-point and split over the inproc backend, ranks as threads, at several world sizes.

#include <gtest/gtest.h>

#include "cases/abort_cases.hpp"
#include "cases/p2p_cases.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/bootstrap.hpp"
#include "meshcomm/error.hpp"

#include <atomic>
#include <thread>

namespace meshcomm::testing {
namespace {

class InprocP2P : public ::testing::TestWithParam<int> {};

TEST_P(InprocP2P, RingExchange) { run_ranks(GetParam(), check_ring_exchange); }
TEST_P(InprocP2P, OutOfOrderTags) { run_ranks(GetParam(), check_out_of_order_tags); }
TEST_P(InprocP2P, SameTagOrder) { run_ranks(GetParam(), check_same_tag_order); }
TEST_P(InprocP2P, OneWayLargeMessages) { run_ranks(GetParam(), check_one_way_large_messages); }
TEST_P(InprocP2P, ExchangeBehindThePeer) { run_ranks(GetParam(), check_exchange_behind_the_peer); }
TEST_P(InprocP2P, MidSizedMessages) { run_ranks(GetParam(), check_mid_sized_messages); }
TEST_P(InprocP2P, WaitsProgressOtherOperations) { run_ranks(GetParam(), check_waits_progress_other_operations); }
TEST_P(InprocP2P, ZeroSizeMessages) { run_ranks(GetParam(), check_zero_size_messages); }
TEST_P(InprocP2P, Split) { run_ranks(GetParam(), check_split); }
TEST_P(InprocP2P, ReceiveTimeoutNamesPeer) { run_ranks(GetParam(), check_receive_timeout); }
TEST_P(InprocP2P, ArgumentErrors) { run_ranks(GetParam(), check_argument_errors); }
TEST_P(InprocP2P, SizeMismatch) { run_ranks(GetParam(), check_size_mismatch); }
TEST_P(InprocP2P, AbortFailsEveryPendingWork) { run_ranks(GetParam(), check_abort); }
TEST_P(InprocP2P, Barrier) {
  run_ranks(GetParam(), [](Communicator& comm) {
    for (int i = 0; i < 20; ++i) comm.barrier();
    auto first = comm.ibarrier();
    auto second = comm.ibarrier();
    second.wait();
    first.wait();
  });
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, InprocP2P, ::testing::Values(1, 2, 3, 4, 7, 16),
                         [](const auto& param_info) { return "world" + std::to_string(param_info.param); });

TEST(InprocP2P, SplitListsTheRanksThatNeverJoined) {
  run_ranks(
      4,
      [](Communicator& comm) {
        if (comm.rank() < 2) {  // ranks 2 and 3 never call this split
          try {
            (void)comm.split(0, comm.rank());
            ADD_FAILURE() << "a split that two ranks never joined completed";
          } catch (const Error& error) {
            EXPECT_EQ(error.code(), ErrorCode::timeout) << error.what();
            EXPECT_NE(std::string(error.what()).find("ranks 2, 3 have not joined this split"), std::string::npos)
                << error.what();
            EXPECT_EQ(error.context().peer, 2) << error.what();
          }
        }
        comm.barrier(kTestTimeout);  // ranks 2 and 3 wait here while the others time out
      },
      std::chrono::milliseconds(500));
}

TEST(InprocP2P, SendTimeoutNamesPeerAndWithdraws) {
  run_ranks(2, [](Communicator& comm) {
    if (comm.rank() == 0) {
      std::vector<int> data(8, 1);
      auto send = comm.isend(data, 1, 4);
      try {
        send.wait(std::chrono::milliseconds{100});
        ADD_FAILURE() << "the send completed without a receiver";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::timeout);
        EXPECT_NE(std::string(error.what()).find("peer 1 posted no matching receive"), std::string::npos)
            << error.what();
      }
    }
    comm.barrier();
    // The withdrawn send must not be delivered to a later receive.
    if (comm.rank() == 1) {
      std::vector<int> incoming(8, 0);
      auto receive = comm.irecv(incoming, 0, 4);
      EXPECT_THROW(receive.wait(std::chrono::milliseconds{100}), Error);
    }
    comm.barrier();
  });
}

TEST(InprocP2P, TwoCommunicatorsFromOneWorldDoNotMix) {
  auto world = InProcessWorld::create(2);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      InProcessBootstrap bootstrap(world, rank);
      auto first = Communicator::create(bootstrap, {.timeout = kTestTimeout});
      auto second = Communicator::create(bootstrap, {.timeout = kTestTimeout});
      int a = 10 + rank;
      int b = 20 + rank;
      int got_a = 0;
      int got_b = 0;
      const int peer = 1 - rank;
      auto r2 = second.irecv(BufferView(&got_b, 1, DataType::i32), peer, 0);
      auto r1 = first.irecv(BufferView(&got_a, 1, DataType::i32), peer, 0);
      auto s1 = first.isend(ConstBufferView(&a, 1, DataType::i32), peer, 0);
      auto s2 = second.isend(ConstBufferView(&b, 1, DataType::i32), peer, 0);
      s1.wait();
      s2.wait();
      r1.wait();
      r2.wait();
      if (got_a != 10 + peer || got_b != 20 + peer) ++failures;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(InprocBootstrap, AllGatherAndMissingRankTimeout) {
  auto world = InProcessWorld::create(3, std::chrono::milliseconds{300});
  std::vector<std::thread> threads;
  std::vector<std::string> errors(3);
  for (int rank = 0; rank < 2; ++rank) {  // rank 2 never arrives
    threads.emplace_back([&, rank] {
      InProcessBootstrap bootstrap(world, rank);
      const std::byte mine[1] = {std::byte(rank)};
      try {
        (void)bootstrap.all_gather(mine);
      } catch (const Error& error) {
        errors[rank] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(errors[rank].find("2] did not arrive"), std::string::npos) << errors[rank];
  }
  EXPECT_THROW(InProcessBootstrap(world, 3), Error);
}

}  // namespace
}  // namespace meshcomm::testing
