// Point-to-point and split over the mpi backend, run under mpirun at several sizes.

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <vector>

#include "cases/abort_cases.hpp"
#include "cases/p2p_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiP2P, RingExchange) { check_ring_exchange(mpi_world()); }
TEST(MpiP2P, OutOfOrderTags) { check_out_of_order_tags(mpi_world()); }
TEST(MpiP2P, SameTagOrder) { check_same_tag_order(mpi_world()); }
TEST(MpiP2P, OneWayLargeMessages) { check_one_way_large_messages(mpi_world()); }
TEST(MpiP2P, ExchangeBehindThePeer) { check_exchange_behind_the_peer(mpi_world()); }
TEST(MpiP2P, MidSizedMessages) { check_mid_sized_messages(mpi_world()); }
TEST(MpiP2P, WaitsProgressOtherOperations) { check_waits_progress_other_operations(mpi_world()); }
// A loop that polls test() itself sees, through progress_events_on_this_thread, that UCX moved a
// large message piece by piece (its cue to poll again at once instead of napping).
TEST(MpiP2P, PollingSeesEngineProgress) {
  auto& comm = mpi_world();
  if (comm.backend() != BackendKind::ucx) GTEST_SKIP() << "only the ucx backend reports its engine's progress";
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<std::byte> message(std::size_t{8} << 20, std::byte{7});
  const auto before = progress_events_on_this_thread();
  if (comm.rank() == 0) {
    auto work = comm.isend(std::span<const std::byte>(message), 1, 91);
    while (!work.test()) {
    }
  } else if (comm.rank() == 1) {
    std::vector<std::byte> received(message.size());
    auto work = comm.irecv(std::span<std::byte>(received), 0, 91);
    while (!work.test()) {
    }
    EXPECT_EQ(received, message);
  }
  if (comm.rank() <= 1) {
    EXPECT_GT(progress_events_on_this_thread(), before);
  }
  comm.barrier();
}
TEST(MpiP2P, ZeroSizeMessages) { check_zero_size_messages(mpi_world()); }
TEST(MpiP2P, Split) { check_split(mpi_world()); }
TEST(MpiP2P, ReceiveTimeoutNamesPeer) { check_receive_timeout(mpi_world()); }
TEST(MpiP2P, ArgumentErrors) { check_argument_errors(mpi_world()); }
TEST(MpiP2P, AbortFailsEveryPendingWork) { check_abort(mpi_world()); }
TEST(MpiP2P, SizeMismatch) { check_size_mismatch(mpi_world()); }
TEST(MpiP2P, Barrier) {
  for (int i = 0; i < 20; ++i) mpi_world().barrier();
}

}  // namespace
}  // namespace meshcomm::testing
