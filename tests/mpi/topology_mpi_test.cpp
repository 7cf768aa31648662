// Topology discovery under mpirun: every rank agrees on nodes and local ranks.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/mpi_world.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm::testing {
namespace {

/// Every rank's view of `value`, gathered.
std::vector<int> gathered(Communicator& comm, int value) {
  std::vector<int> all(comm.size());
  comm.all_gather(ConstBufferView(&value, 1, DataType::i32), all).wait();
  return all;
}

TEST(MpiTopology, DiscoveryAgreesAcrossRanks) {
  auto& world = mpi_world();
  const auto topology = Topology::discover(world);
  EXPECT_EQ(topology.world_size(), world.size());
  // One machine: one node, local ranks equal ranks.
  EXPECT_EQ(topology.node_count(), 1);
  EXPECT_EQ(topology.local_rank(world.rank()), world.rank());
  for (int count : gathered(world, topology.node_count())) EXPECT_EQ(count, topology.node_count());
  for (int count : gathered(world, topology.max_ranks_per_node())) EXPECT_EQ(count, world.size());
  // Every rank knows every rank's binding (this one's as it sees it itself).
  EXPECT_EQ(topology.binding(world.rank()).cpus, Topology::this_binding().cpus);
  EXPECT_FALSE(topology.binding(world.rank()).cpus.empty());
}

TEST(MpiTopology, SimulatedNodesFromTheEnvironment) {
  auto& world = mpi_world();
  ::setenv("MESHCOMM_SIMULATE_NODES", "2", 1);
  const auto topology = Topology::discover(world);
  ::unsetenv("MESHCOMM_SIMULATE_NODES");
  EXPECT_EQ(topology.node_count(), 2);
  EXPECT_EQ(topology.node_of(0), 0);
  EXPECT_EQ(topology.node_of(world.size() - 1), 1);
  // A mesh placed on it keeps tp on one node.
  auto shared = std::make_shared<const Topology>(topology);
  auto mesh = Mesh::create(world, MeshSpec::parse(world.size() % 2 == 0 ? "1,-1,2,1" : "1,-1,1,1"),
                           {.topology = shared});
  EXPECT_TRUE(mesh.report().warnings.empty()) << mesh.describe();
  world.barrier();
}

TEST(MpiTopology, BadEnvironmentIsRefusedNamingTheVariable) {
  auto& world = mpi_world();
  auto refused = [&](const char* variable, const char* value) {
    ::setenv(variable, value, 1);
    try {
      (void)Topology::discover(world);
      ADD_FAILURE() << variable << "=" << value << " was taken";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(std::string(variable) + " = '" + value + "'"), std::string::npos)
          << error.what();
    }
    ::unsetenv(variable);
  };
  refused("MESHCOMM_SIMULATE_NODES", "2x");
  refused("MESHCOMM_SIMULATE_NODES", "0");
  refused("MESHCOMM_TOPOLOGY_XML", "/nonexistent/topology.xml");
  world.barrier();  // still usable
}

}  // namespace
}  // namespace meshcomm::testing
