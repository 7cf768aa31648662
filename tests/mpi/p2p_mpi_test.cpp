// Point-to-point and split over the mpi backend, run under mpirun at several sizes.

#include <gtest/gtest.h>

#include "cases/abort_cases.hpp"
#include "cases/p2p_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiP2P, RingExchange) { check_ring_exchange(mpi_world()); }
TEST(MpiP2P, OutOfOrderTags) { check_out_of_order_tags(mpi_world()); }
TEST(MpiP2P, SameTagOrder) { check_same_tag_order(mpi_world()); }
TEST(MpiP2P, OneWayLargeMessages) { check_one_way_large_messages(mpi_world()); }
TEST(MpiP2P, WaitsProgressOtherOperations) { check_waits_progress_other_operations(mpi_world()); }
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
