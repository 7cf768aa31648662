#include "mesh_cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "meshcomm/mesh.hpp"

namespace meshcomm::testing {

void check_mesh_groups(Communicator& world, std::string_view dims, const std::vector<ExpectedGroups>& expected,
                       const Placement& placement) {
  auto mesh = Mesh::create(world, MeshSpec::parse(dims), {.placement = placement});
  for (const auto& entry : expected) {
    std::string label;
    for (auto axis : entry.axes) label += std::string(axis) + " ";
    EXPECT_EQ(mesh.all_groups(entry.axes), entry.groups) << "axes " << label;
    const auto mine = std::find_if(entry.groups.begin(), entry.groups.end(), [&](const auto& group) {
      return std::find(group.begin(), group.end(), world.rank()) != group.end();
    });
    ASSERT_NE(mine, entry.groups.end()) << "rank " << world.rank() << " is in no expected group for " << label;
    EXPECT_EQ(mesh.group_ranks(entry.axes), *mine) << "axes " << label;

    auto& group = mesh.comm(entry.axes);
    ASSERT_EQ(group.size(), static_cast<int>(mine->size())) << "axes " << label;
    EXPECT_EQ((*mine)[group.rank()], world.rank()) << "axes " << label;
    EXPECT_EQ(std::vector<int>(group.root_ranks().begin(), group.root_ranks().end()), *mine) << "axes " << label;

    // The communicator really joins these ranks: pass world ranks around its ring.
    const int right = (group.rank() + 1) % group.size();
    const int left = (group.rank() - 1 + group.size()) % group.size();
    std::int32_t outgoing = world.rank();
    std::int32_t incoming = -1;
    auto receive = group.irecv(BufferView(&incoming, 1, DataType::i32), left, 3);
    auto send = group.isend(ConstBufferView(&outgoing, 1, DataType::i32), right, 3);
    send.wait();
    receive.wait();
    EXPECT_EQ(incoming, (*mine)[left]) << "axes " << label;
    EXPECT_EQ(&mesh.comm(entry.axes), &group) << "the communicator of a group is cached";
  }
  world.barrier();
}

std::vector<ExpectedGroups> groups_1_x_2_2_world_8() {
  // rank = fsdp*4 + tp*2 + sp
  return {
      {{"dp"}, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
      {{"fsdp"}, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {{"tp"}, {{0, 2}, {1, 3}, {4, 6}, {5, 7}}},
      {{"sp"}, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
      {{"tp", "sp"}, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {{"sp", "tp"}, {{0, 2, 1, 3}, {4, 6, 5, 7}}},
      {{"dp", "fsdp"}, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {{"fsdp", "sp"}, {{0, 1, 4, 5}, {2, 3, 6, 7}}},
      {{"sp", "fsdp"}, {{0, 4, 1, 5}, {2, 6, 3, 7}}},
      {{"dp", "fsdp", "tp", "sp"}, {{0, 1, 2, 3, 4, 5, 6, 7}}},
  };
}

std::vector<ExpectedGroups> groups_2_2_1_2_world_8() {
  // rank = dp*4 + fsdp*2 + sp
  return {
      {{"dp"}, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {{"fsdp"}, {{0, 2}, {1, 3}, {4, 6}, {5, 7}}},
      {{"tp"}, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
      {{"sp"}, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
      {{"dp", "fsdp"}, {{0, 2, 4, 6}, {1, 3, 5, 7}}},
      {{"fsdp", "dp"}, {{0, 4, 2, 6}, {1, 5, 3, 7}}},
      {{"tp", "sp"}, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
      {{"dp", "sp"}, {{0, 1, 4, 5}, {2, 3, 6, 7}}},
      {{"sp", "tp", "fsdp"}, {{0, 2, 1, 3}, {4, 6, 5, 7}}},
  };
}

}  // namespace meshcomm::testing
