// Placement as a pure function of (mesh dims, policy, topology): no network.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "meshcomm/error.hpp"
#include "meshcomm/placement.hpp"

namespace meshcomm {
namespace {

/// The group of `axis` that holds rank 0, for `dims` placed by `policy`.
std::vector<int> first_group(const char* dims, const char* policy, const Topology& topology, const char* axis) {
  const auto spec = MeshSpec::parse(dims).resolved(topology.world_size());
  const auto placement = place_ranks(spec, Placement::parse(policy), topology);
  return analyze_placement(spec, placement, topology).groups[*spec.find(axis)].front();
}

void expect_bijection(const std::vector<std::vector<int>>& placement) {
  std::set<std::vector<int>> seen(placement.begin(), placement.end());
  EXPECT_EQ(seen.size(), placement.size());
}

TEST(Placement, EasyLmIsRowMajorInMeshOrder) {
  const auto topology = Topology::simulated(24, 24);
  const auto placement = place_ranks(MeshSpec::parse("2,3,2,2").resolved(24), Placement::parse("easylm"), topology);
  expect_bijection(placement);
  EXPECT_EQ(placement[1], (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(placement[2], (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(placement[23], (std::vector<int>{1, 2, 1, 1}));
}

TEST(Placement, NamedPoliciesBuildTheirSystemsGroups) {
  // 16 ranks, dp=fsdp=tp=sp=2; groups of rank 0, computed by hand from each system's rule.
  const auto topology = Topology::simulated(16, 8);
  // EasyLM/LWM: np.arange(n).reshape(dims), last axis fastest: rank = dp*8 + fsdp*4 + tp*2 + sp.
  EXPECT_EQ(first_group("2,2,2,2", "easylm", topology, "sp"), (std::vector<int>{0, 1}));
  EXPECT_EQ(first_group("2,2,2,2", "easylm", topology, "tp"), (std::vector<int>{0, 2}));
  EXPECT_EQ(first_group("2,2,2,2", "easylm", topology, "fsdp"), (std::vector<int>{0, 4}));
  EXPECT_EQ(first_group("2,2,2,2", "easylm", topology, "dp"), (std::vector<int>{0, 8}));
  // torchtitan: pp, dp_replicate, dp_shard, cp, tp: rank = dp*8 + fsdp*4 + sp*2 + tp.
  for (const char* policy : {"torchtitan", "accelerate", "megatron:tp-cp-ep-dp-pp"}) {
    EXPECT_EQ(first_group("2,2,2,2", policy, topology, "tp"), (std::vector<int>{0, 1})) << policy;
    EXPECT_EQ(first_group("2,2,2,2", policy, topology, "sp"), (std::vector<int>{0, 2})) << policy;
    EXPECT_EQ(first_group("2,2,2,2", policy, topology, "fsdp"), (std::vector<int>{0, 4})) << policy;
    EXPECT_EQ(first_group("2,2,2,2", policy, topology, "dp"), (std::vector<int>{0, 8})) << policy;
  }
  // Megatron tp-dp-cp-pp: tp fastest, then data parallel (fsdp before dp), then cp.
  EXPECT_EQ(first_group("2,2,2,2", "megatron:tp-dp-cp-pp", topology, "fsdp"), (std::vector<int>{0, 2}));
  EXPECT_EQ(first_group("2,2,2,2", "megatron:tp-dp-cp-pp", topology, "dp"), (std::vector<int>{0, 4}));
  EXPECT_EQ(first_group("2,2,2,2", "megatron:tp-dp-cp-pp", topology, "sp"), (std::vector<int>{0, 8}));
  // accelerate's own names, in its canonical order dp_replicate, dp_shard, cp, tp.
  EXPECT_EQ(first_group("dp_shard:2,tp:2,dp_replicate:2,cp:2", "accelerate", topology, "cp"), (std::vector<int>{0, 2}));
  EXPECT_EQ(first_group("dp_shard:2,tp:2,dp_replicate:2,cp:2", "accelerate", topology, "dp_replicate"),
            (std::vector<int>{0, 8}));
}

TEST(Placement, LwmMeshesOnNodesOfEight) {
  const auto topology = Topology::simulated(256, 8);
  // LWM's '1,1,4,64' as EasyLM places it: every tp group spans 4 nodes, and it is flagged.
  EXPECT_EQ(first_group("1,1,4,64", "easylm", topology, "tp"), (std::vector<int>{0, 64, 128, 192}));
  const auto spec = MeshSpec::parse("1,1,4,64").resolved(256);
  const auto lwm = analyze_placement(spec, place_ranks(spec, Placement::parse("easylm"), topology), topology);
  ASSERT_FALSE(lwm.warnings.empty());
  EXPECT_NE(lwm.warnings.front().find("tp group [0,64,128,192] spans 4 nodes"), std::string::npos);
  // The default keeps tp inside a node and the sp ring at its minimum.
  EXPECT_EQ(first_group("1,1,4,64", "topology_aware", topology, "tp"), (std::vector<int>{0, 1, 2, 3}));
  const auto ours = analyze_placement(spec, place_ranks(spec, Placement{}, topology), topology);
  EXPECT_TRUE(ours.warnings.empty());
  EXPECT_EQ(ours.ring_crossings, ours.ring_minimum_crossings);
  // '1,64,4,1' already has tp innermost under EasyLM.
  EXPECT_EQ(first_group("1,64,4,1", "easylm", topology, "tp"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(first_group("1,64,4,1", "easylm", topology, "fsdp").size(), 64U);
}

TEST(Placement, TopologyAwareAtScale) {
  // 1024 ranks on 128 nodes of 8, numbered node-major and round-robin (mpirun --rank-by node).
  std::vector<int> round_robin;
  for (int rank = 0; rank < 1024; ++rank) round_robin.push_back(rank % 128);
  for (const auto& topology : {Topology::simulated(1024, 8), Topology::from_rank_nodes(round_robin)}) {
    for (const char* dims : {"2,8,8,8", "1,-1,4,8", "4,-1,2,16", "1,1,8,128"}) {
      const auto spec = MeshSpec::parse(dims).resolved(1024);
      const auto placement = place_ranks(spec, Placement{}, topology);
      expect_bijection(placement);
      const auto report = analyze_placement(spec, placement, topology);
      for (const auto& group : report.groups[*spec.find("tp")]) {
        std::set<int> nodes;
        for (int rank : group) nodes.insert(topology.node_of(rank));
        EXPECT_EQ(nodes.size(), 1U) << dims << ": a tp group spans nodes";
      }
      EXPECT_EQ(report.ring_crossings, report.ring_minimum_crossings) << dims;
      for (const auto& [actual, minimum] : report.ring_crossings_each) EXPECT_EQ(actual, minimum) << dims;
      EXPECT_TRUE(report.warnings.empty()) << dims << ": " << report.warnings.front();
    }
  }
}

TEST(Placement, Errors) {
  EXPECT_THROW((void)Placement::parse("fastest"), Error);
  const auto topology = Topology::simulated(8, 8);
  try {
    (void)place_ranks(MeshSpec::parse("2,2,2,1").resolved(8), Placement::parse("megatron:tp-cp"), topology);
    FAIL() << "an order without dp was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("does not place axes dp, fsdp"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)place_ranks(MeshSpec::parse("2,2").resolved(4), Placement{}, topology), Error);
  EXPECT_EQ(Placement::parse("megatron:tp-cp-ep-dp-pp").to_string(), "megatron:tp-cp-ep-dp-pp");
}

}  // namespace
}  // namespace meshcomm
