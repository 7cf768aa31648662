// meshcomm-advise's choices on simulated clusters of 1024 and 4096 ranks (8 per node, the default
// DGX H100 machine): the pure cost model keeps tp inside a node, shards parameters rather than
// replicating them where memory allows, leaves the head all-to-all for a sequence exchange when
// heads run out, and never ranks a mesh worse for more bandwidth or memory.

#include <gtest/gtest.h>

#include "advice.hpp"

namespace meshcomm::testing {
namespace {

using namespace meshcomm::advisor;

Advice advise_on(int world, const ModelShape& shape, const MachineModel& machine = {},
                 const ChoiceConstraints& constraints = {}) {
  const AdviceRequest request{.shape = shape, .machine = machine, .placement = {}, .constraints = constraints};
  return advise(request, Topology::simulated(world, 8));
}

class AdvisorAtScale : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(AdvisorAtScale, TopChoiceKeepsTpInsideANodeAndShardsMoreThanItReplicates) {
  const auto [model, world] = GetParam();
  const auto advice = advise_on(world, parse_model(model));
  ASSERT_FALSE(advice.ranked.empty());
  const auto& top = advice.ranked.front();
  const auto links = mesh_links(top.choice, Placement{}, Topology::simulated(world, 8), MachineModel{}.nics_per_node);
  EXPECT_LE(top.choice.tp, 8) << top.choice.label();
  EXPECT_FALSE(links.tp.crosses_nodes) << top.choice.label();
  EXPECT_GE(top.choice.shard_ranks(), top.choice.replica_ranks()) << top.choice.label();
  EXPECT_LE(static_cast<double>(top.memory.peak_total()), MachineModel{}.memory_bytes);
  // The ranking is by predicted step.
  for (std::size_t i = 1; i < advice.ranked.size(); ++i) {
    EXPECT_LE(advice.ranked[i - 1].time.step(), advice.ranked[i].time.step());
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, AdvisorAtScale,
                         ::testing::Combine(::testing::Values("lwm-7b-32k", "lwm-7b-128k", "lwm-7b-1m"),
                                            ::testing::Values(1024, 4096)),
                         [](const auto& test) {
                           std::string name =
                               std::string(std::get<0>(test.param)) + "_" + std::to_string(std::get<1>(test.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(AdvisorAtScale, FsdpBeatsDpWhereBothFitBecauseItsTransfersHide) {
  // A 1B-parameter model at 8k tokens: dp or fsdp over the node's 8 ranks both fit in memory;
  // FSDP's gathers hide under compute, the replicas' all-reduce does not.
  const ModelShape shape =
      parse_model("layers=16,width=2048,heads=16,kv-heads=16,hidden=8192,vocab=32000,seq=8192,batch=8,dtype=bf16");
  ChoiceConstraints constraints;
  add_fixed_axes(constraints, "tp=1,sp=1");
  const auto advice = advise_on(8, shape, MachineModel{}, constraints);
  ASSERT_FALSE(advice.ranked.empty());
  EXPECT_EQ(advice.ranked.front().choice.fsdp, 8) << advice.ranked.front().choice.label();
  const auto dp_only =
      std::find_if(advice.ranked.begin(), advice.ranked.end(), [](const auto& r) { return r.choice.dp == 8; });
  ASSERT_NE(dp_only, advice.ranked.end()) << "dp 8 must fit, or the comparison says nothing";
}

TEST(AdvisorAtScale, HeadAllToAllGivesWayToASequenceExchangeWhenHeadsRunOut) {
  ModelShape shape = parse_model("lwm-7b-32k");
  const auto with_heads = advise_on(4096, shape);
  ASSERT_FALSE(with_heads.ranked.empty());
  const auto& top = with_heads.ranked.front().choice;
  EXPECT_EQ(top.exchange, SequenceExchange::head_all_to_all) << top.label();
  EXPECT_EQ(static_cast<std::size_t>(top.sp), shape.heads / static_cast<std::size_t>(top.tp)) << top.label();
  // Half the heads: that sp no longer divides them, and the ring takes over.
  shape.heads = shape.kv_heads = 16;
  const auto fewer_heads = advise_on(4096, shape);
  ASSERT_FALSE(fewer_heads.ranked.empty());
  EXPECT_NE(fewer_heads.ranked.front().choice.exchange, SequenceExchange::head_all_to_all)
      << fewer_heads.ranked.front().choice.label();
  // Sliding windows take the halo once heads are too few for the all-to-all.
  ModelShape sliding = parse_model("lwm-7b-32k,heads=4,kv-heads=4,window=4096");
  const auto halo = advise_on(1024, sliding, MachineModel{}, [] {
    ChoiceConstraints constraints;
    add_fixed_axes(constraints, "sp=8");
    return constraints;
  }());
  ASSERT_FALSE(halo.ranked.empty());
  EXPECT_EQ(halo.ranked.front().choice.exchange, SequenceExchange::halo) << halo.ranked.front().choice.label();
}

TEST(AdvisorMonotonic, MoreBandwidthOrMemoryNeverMakesAMeshWorseOrInfeasible) {
  for (const char* model : {"lwm-7b-32k", "lwm-7b-128k", "anemoi-o96"}) {
    const ModelShape shape = parse_model(model);
    MachineModel base;
    const auto before = advise_on(1024, shape, base);
    for (int change = 0; change < 4; ++change) {
      MachineModel better = base;
      if (change == 0) better.intra.bandwidth_gbps *= 2;
      if (change == 1) better.inter.bandwidth_gbps *= 2;
      if (change == 2) better.memory_bytes *= 2;
      if (change == 3) better.nics_per_node *= 2;
      const auto after = advise_on(1024, shape, better);
      EXPECT_GE(after.ranked.size(), before.ranked.size()) << model << " change " << change;
      for (const auto& old : before.ranked) {
        const auto same = std::find_if(after.ranked.begin(), after.ranked.end(), [&](const RankedChoice& r) {
          return r.choice.label() == old.choice.label() && r.choice.shard_axes() == old.choice.shard_axes();
        });
        ASSERT_NE(same, after.ranked.end()) << model << ": " << old.choice.label() << " became infeasible";
        EXPECT_LE(same->time.step(), old.time.step() * (1 + 1e-12)) << model << ": " << old.choice.label();
      }
      if (!before.ranked.empty()) {
        EXPECT_LE(after.ranked.front().time.step(), before.ranked.front().time.step() * (1 + 1e-12));
      }
    }
  }
}

TEST(AdvisorExplain, NamesTheMeshesAndTheirParts) {
  const auto advice = advise_on(1024, parse_model("lwm-7b-128k"));
  ASSERT_GE(advice.ranked.size(), 2U);
  const auto text = explain(advice.ranked[0], advice.ranked.back());
  EXPECT_NE(text.find(advice.ranked[0].choice.label()), std::string::npos);
  EXPECT_NE(text.find(advice.ranked.back().choice.label()), std::string::npos);
  EXPECT_NE(text.find("memory"), std::string::npos);
}

}  // namespace
}  // namespace meshcomm::testing
