// The collective matrix over the mpi backend (native included), at the job's size.

#include <gtest/gtest.h>

#include "cases/collective_cases.hpp"
#include "harness/mpi_world.hpp"
#include "verifiable/verifiable.hpp"

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

namespace meshcomm::testing {
namespace {

/// The single-copy path: every rank's buffers in meshcomm shared memory.
TEST(MpiCollectives, SharedMemorySingleCopy) {
  auto& comm = mpi_world();
  const int size = comm.size();
  const int rank = comm.rank();
  for (std::size_t count : {std::size_t{1}, std::size_t{4099}, std::size_t{1} << 20}) {
    for (bool in_place : {false, true}) {
      auto input = comm.allocate_shared(count * size * sizeof(float));
      auto output = comm.allocate_shared(count * size * sizeof(float));
      // all_gather
      auto gathered = output.as<float>().first(count * size);
      auto mine = in_place ? gathered.subspan(rank * count, count) : input.as<float>().first(count);
      verifiable::fill(mine.data(), 0, count, DataType::f32, [&](std::size_t i) { return verifiable::payload(rank, 0, i); });
      comm.all_gather(std::span<const float>(mine), gathered, {.algorithm = "shm"}).wait();
      for (int from = 0; from < size; ++from) {
        EXPECT_EQ(verifiable::count_wrong(gathered.data(), from * count, count, DataType::f32,
                                          [&](std::size_t i) { return verifiable::payload(from, 0, i); }),
                  0U)
            << "all_gather from " << from << " count " << count << " in_place " << in_place;
      }
      // reduce_scatter
      auto whole = input.as<float>().first(count * size);
      verifiable::fill(whole.data(), 0, count * size, DataType::f32,
                       [&](std::size_t i) { return verifiable::contribution(ReduceOp::sum, rank, i, size); });
      auto result = in_place ? whole.subspan(rank * count, count) : output.as<float>().first(count);
      comm.reduce_scatter(std::span<const float>(whole), result, {.op = ReduceOp::sum, .algorithm = "shm"}).wait();
      EXPECT_EQ(verifiable::count_wrong(result.data(), 0, count, DataType::f32,
                                        [&](std::size_t i) { return verifiable::reduced(ReduceOp::sum, rank * count + i, size); }),
                0U)
          << "reduce_scatter count " << count << " in_place " << in_place;
    }
  }
}

}  // namespace
}  // namespace meshcomm::testing
