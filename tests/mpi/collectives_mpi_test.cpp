// The collective matrix over the mpi backend (native included), at the job's size.

#include <gtest/gtest.h>

#include "cases/collective_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiCollectives, AllGather) { check_collective_matrix(mpi_world(), CollectiveKind::all_gather); }
TEST(MpiCollectives, ReduceScatter) { check_collective_matrix(mpi_world(), CollectiveKind::reduce_scatter); }
TEST(MpiCollectives, AllReduce) { check_collective_matrix(mpi_world(), CollectiveKind::all_reduce); }
TEST(MpiCollectives, AllToAll) { check_collective_matrix(mpi_world(), CollectiveKind::all_to_all); }
TEST(MpiCollectives, AllToAllv) { check_collective_matrix(mpi_world(), CollectiveKind::all_to_allv); }
TEST(MpiCollectives, Broadcast) { check_collective_matrix(mpi_world(), CollectiveKind::broadcast); }

}  // namespace
}  // namespace meshcomm::testing
