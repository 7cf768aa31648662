// Mesh groups over the mpi backend, against hand-computed rank lists for the job's size.

#include <gtest/gtest.h>

#include "cases/mesh_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiMesh, GroupsForThisWorldSize) {
  auto& world = mpi_world();
  switch (world.size()) {
    case 2:  // dp=1 fsdp=1 tp=2 sp=1
      check_mesh_groups(world, "1,-1,2,1",
                        {{{"tp"}, {{0, 1}}}, {{"fsdp"}, {{0}, {1}}}, {{"sp", "dp"}, {{0}, {1}}}});
      break;
    case 3:  // dp=1 fsdp=3
      check_mesh_groups(world, "1,-1,1,1", {{{"fsdp"}, {{0, 1, 2}}}, {{"tp"}, {{0}, {1}, {2}}}});
      break;
    case 4:  // dp=1 fsdp=2 tp=2 sp=1: rank = fsdp*2 + tp
      check_mesh_groups(world, "1,-1,2,1",
                        {{{"tp"}, {{0, 1}, {2, 3}}},
                         {{"fsdp"}, {{0, 2}, {1, 3}}},
                         {{"sp"}, {{0}, {1}, {2}, {3}}},
                         {{"fsdp", "tp"}, {{0, 1, 2, 3}}},
                         {{"tp", "fsdp"}, {{0, 2, 1, 3}}},
                         {{"dp", "fsdp"}, {{0, 2}, {1, 3}}}});
      break;
    default: GTEST_SKIP() << "no hand-computed table for " << world.size() << " ranks";
  }
}

}  // namespace
}  // namespace meshcomm::testing
