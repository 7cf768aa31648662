// Mesh groups over the inproc backend, checked against hand-computed rank lists.

#include <gtest/gtest.h>

#include "cases/mesh_cases.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"

namespace meshcomm::testing {
namespace {

TEST(InprocMesh, Groups_1_x_2_2_World8) {
  run_ranks(8, [](Communicator& world) { check_mesh_groups(world, "1,-1,2,2", groups_1_x_2_2_world_8()); });
}

TEST(InprocMesh, Groups_2_2_1_2_World8) {
  run_ranks(8, [](Communicator& world) { check_mesh_groups(world, "2,2,1,2", groups_2_2_1_2_world_8()); });
}

TEST(InprocMesh, NamedAxesInGivenOrder) {
  // tp:2 first, then sp:2: rank = tp*2 + sp.
  run_ranks(4, [](Communicator& world) {
    check_mesh_groups(world, "tp:2,sp:-1", {{{"tp"}, {{0, 2}, {1, 3}}}, {{"sp"}, {{0, 1}, {2, 3}}}});
  });
}

TEST(InprocMesh, CoordinatesAndErrors) {
  run_ranks(4, [](Communicator& world) {
    auto mesh = Mesh::create(world, MeshSpec::parse("1,-1,2,1"));
    EXPECT_EQ(mesh.spec().to_string(), "dp:1,fsdp:2,tp:2,sp:1");
    EXPECT_EQ(mesh.coordinate("tp"), world.rank() % 2);
    EXPECT_EQ(mesh.coordinate("fsdp"), world.rank() / 2);
    EXPECT_EQ(mesh.rank_at(mesh.coordinates()), world.rank());
    try {
      (void)mesh.comm({"pp"});
      ADD_FAILURE() << "unknown axis accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("valid axes are dp, fsdp, tp, sp"), std::string::npos) << error.what();
    }
    EXPECT_THROW((void)mesh.comm({"tp", "tp"}), Error);
    const std::string description = mesh.describe();
    EXPECT_NE(description.find("dp:1,fsdp:2,tp:2,sp:1"), std::string::npos) << description;
    EXPECT_NE(description.find("[0,1] [2,3]"), std::string::npos) << description;
  });
}

TEST(InprocMesh, WrongWorldSizeIsRejected) {
  run_ranks(3, [](Communicator& world) {
    try {
      (void)Mesh::create(world, MeshSpec::parse("1,-1,2,1"));
      ADD_FAILURE() << "a mesh of tp=2 was accepted on 3 ranks";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("1, 3"), std::string::npos) << error.what();
    }
    world.barrier();
  });
}

}  // namespace
}  // namespace meshcomm::testing
