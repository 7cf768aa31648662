// Tutorial 1: build a device mesh from mesh dims under mpirun and look at its groups.
//
//   mpirun -np 4 build/examples/mesh_groups --mesh-dim 1,-1,2,1
//   mpirun -np 8 build/examples/mesh_groups --mesh-dim dp:2,fsdp:-1,tp:2 --axes tp --axes dp,fsdp
//
// Rank 0 prints the placement; then every rank reports its coordinates and, for each requested
// axis set, the world ranks of the communicator it actually got (checked against the mesh's own
// arithmetic). A bad --mesh-dim makes every rank print the parser's error and exit with 2.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/topology.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

namespace {

/// This rank's report: its coordinates and the members of each of its groups.
std::string report(meshcomm::Mesh& mesh, int rank, const std::vector<std::string>& axis_sets) {
  std::vector<std::string> coordinates;
  for (std::size_t axis = 0; axis < mesh.spec().axes().size(); ++axis) {
    coordinates.push_back(fmt::format("{}={}", mesh.spec().axes()[axis].name, mesh.coordinates()[axis]));
  }
  std::string line = fmt::format("rank {:>3}  ({})", rank, fmt::join(coordinates, " "));
  for (const auto& set : axis_sets) {
    const auto names = meshcomm::split_axis_list(set);
    auto& group = mesh.comm(names);
    std::vector<int> members(group.root_ranks().begin(), group.root_ranks().end());
    if (members != mesh.group_ranks(names)) {
      throw meshcomm::Error(meshcomm::ErrorCode::internal,
                            fmt::format("the {} communicator holds ranks [{}] but the mesh expects [{}]", set,
                                        fmt::join(members, ","), fmt::join(mesh.group_ranks(names), ",")));
    }
    group.barrier();
    line += fmt::format("  {}: [{}]", set, fmt::join(members, ","));
  }
  return line;
}

/// Rank 0 prints every rank's line in rank order.
void print_in_rank_order(meshcomm::Communicator& world, const std::string& line) {
  if (world.rank() != 0) {
    const std::uint64_t length = line.size();
    world.isend(meshcomm::ConstBufferView(&length, 1, meshcomm::DataType::u64), 0, 1).wait();
    world.isend(meshcomm::ConstBufferView(line.data(), line.size(), meshcomm::DataType::u8), 0, 2).wait();
    return;
  }
  fmt::print("{}\n", line);
  for (int rank = 1; rank < world.size(); ++rank) {
    std::uint64_t length = 0;
    world.irecv(meshcomm::BufferView(&length, 1, meshcomm::DataType::u64), rank, 1).wait();
    std::string other(length, '\0');
    world.irecv(meshcomm::BufferView(other.data(), other.size(), meshcomm::DataType::u8), rank, 2).wait();
    fmt::print("{}\n", other);
  }
}

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CLI::App app{"Builds a device mesh over the mpirun job and prints each rank's coordinates and groups."};
  std::string mesh_dim = "1,-1,1,1";
  std::vector<std::string> axis_sets;
  app.add_option("--mesh-dim", mesh_dim, "mesh dims: sizes for dp,fsdp,tp,sp ('1,-1,2,1') or named ('dp:2,tp:-1')")
      ->capture_default_str();
  app.add_option("--axes", axis_sets, "an axis or comma-separated axis set to show; repeatable (default: each axis)");
  std::string policy = "topology_aware";
  app.add_option("--policy", policy, "placement: topology_aware, easylm, torchtitan, accelerate, megatron:ORDER")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return rank == 0 ? app.exit(error) : (error.get_exit_code() == 0 ? 0 : 2);
  }

  try {
    meshcomm::MpiBootstrap bootstrap;
    auto world = meshcomm::Communicator::create(bootstrap);
    auto topology = std::make_shared<const meshcomm::Topology>(meshcomm::Topology::discover(world));
    auto mesh = meshcomm::Mesh::create(world, meshcomm::MeshSpec::parse(mesh_dim),
                                       {.placement = meshcomm::Placement::parse(policy), .topology = topology});
    if (axis_sets.empty()) {
      for (const auto& axis : mesh.spec().axes()) axis_sets.push_back(axis.name);
    }
    if (world.rank() == 0) fmt::print("{}\n", mesh.describe());
    print_in_rank_order(world, report(mesh, world.rank(), axis_sets));
    world.barrier();
  } catch (const meshcomm::Error& error) {
    fmt::print(stderr, "rank {}: error: {}\n", rank, error.what());
    return 2;
  }
  return 0;
}
