// hwloc XML fixtures and simulated topologies.

#include <gtest/gtest.h>

#include <string>

#include "meshcomm/config.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm {
namespace {

const std::string kFixtures = MESHCOMM_FIXTURES_DIR;

TEST(Topology, DgxH100Fixture) {
  if (!MESHCOMM_HAVE_HWLOC) GTEST_SKIP() << "built without hwloc";
  const auto node = Topology::node_from_xml(kFixtures + "/dgx_h100.xml");
  EXPECT_EQ(node.host, "dgx-h100-fixture");
  EXPECT_EQ(node.packages, 2);
  EXPECT_EQ(node.numa_nodes, 2);
  EXPECT_EQ(node.cores, 112);
  ASSERT_EQ(node.gpus.size(), 8U);
  ASSERT_EQ(node.nics.size(), 8U);
  EXPECT_EQ(node.gpus[0].name, "cuda0");
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:1b:00.0");
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(node.gpus[i].numa_node, i / 4) << "GPU " << i;
    EXPECT_EQ(node.nics[i].numa_node, i / 4) << "NIC " << i;
    EXPECT_EQ(node.nics[i].name, "mlx5_" + std::to_string(i));
    EXPECT_EQ(node.gpus[i].nvlink_peers.size(), 7U) << "every H100 reaches the other 7 through NVSwitch";
  }
}

TEST(Topology, ThisMachineFixture) {
  if (!MESHCOMM_HAVE_HWLOC) GTEST_SKIP() << "built without hwloc";
  const auto node = Topology::node_from_xml(kFixtures + "/this_machine.xml");
  EXPECT_EQ(node.packages, 1);
  EXPECT_EQ(node.numa_nodes, 1);
  EXPECT_EQ(node.cores, 2);
  EXPECT_TRUE(node.gpus.empty());
  ASSERT_EQ(node.nics.size(), 1U);
  EXPECT_EQ(node.nics[0].name, "eth0");
}

TEST(Topology, MissingXmlIsAnErrorNamingTheFile) {
  try {
    (void)Topology::node_from_xml("/no/such/topology.xml");
    FAIL() << "a missing file was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/no/such/topology.xml"), std::string::npos) << error.what();
  }
}

TEST(Topology, SimulatedAndMappedNodes) {
  const auto simulated = Topology::simulated(10, 4);
  EXPECT_EQ(simulated.node_count(), 3);
  EXPECT_EQ(simulated.node_of(9), 2);
  EXPECT_EQ(simulated.local_rank(9), 1);
  EXPECT_EQ(simulated.ranks_on(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(simulated.max_ranks_per_node(), 4);
  const auto mapped = Topology::from_rank_nodes({1, 0, 1, 0});
  EXPECT_EQ(mapped.ranks_on(1), (std::vector<int>{0, 2}));
  EXPECT_EQ(mapped.local_rank(2), 1);
  EXPECT_THROW((void)Topology::simulated(0, 4), Error);
}

TEST(Topology, ThisNodeIsDiscovered) {
  const auto node = Topology::this_node();
  EXPECT_FALSE(node.host.empty());
  EXPECT_GE(node.cores, 1);
}

}  // namespace
}  // namespace meshcomm
