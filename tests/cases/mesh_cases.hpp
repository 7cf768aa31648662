#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/placement.hpp"

namespace meshcomm::testing {

/// The groups expected for one set of axes, each as world ranks in group order.
struct ExpectedGroups {
  std::vector<std::string_view> axes;
  std::vector<std::vector<int>> groups;
};

/// Builds the mesh `dims` over `world` with `placement` (row-major by default, which the hand
/// lists assume) and checks, for each entry, that `all_groups` lists
/// exactly the expected groups and that the communicator of this rank's group has its members in
/// that order and really connects them (a ring exchange of world ranks inside it).
void check_mesh_groups(Communicator& world, std::string_view dims, const std::vector<ExpectedGroups>& expected,
                       const Placement& placement = Placement::parse("easylm"));

/// The hand-computed groups of `1,-1,2,2` over 8 ranks (dp=1 fsdp=2 tp=2 sp=2).
std::vector<ExpectedGroups> groups_1_x_2_2_world_8();
/// The hand-computed groups of `2,2,1,2` over 8 ranks.
std::vector<ExpectedGroups> groups_2_2_1_2_world_8();

}  // namespace meshcomm::testing
