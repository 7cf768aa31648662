// Whether a host's ranks outnumber its cores: the union of the ranks' affinity masks is counted,
// so ranks bound one to a core are not oversubscribed while unbound ones beyond the core count
// are.

#include <gtest/gtest.h>

#include <sched.h>

#include <vector>

#include "host_cores.hpp"

namespace meshcomm::detail {
namespace {

CoreSet cores(std::initializer_list<int> numbers) {
  CoreSet made;
  for (const int core : numbers) made.words[static_cast<std::size_t>(core / 64)] |= std::uint64_t{1} << (core % 64);
  return made;
}

TEST(HostCores, RanksBoundOneToACoreDoNotOutnumberThem) {
  const std::vector<CoreSet> ranks{cores({0}), cores({1})};
  EXPECT_FALSE(ranks_outnumber_cores(ranks));
}

TEST(HostCores, UnboundRanksBeyondTheCoresOutnumberThem) {
  const std::vector<CoreSet> two{cores({0, 1}), cores({0, 1})};
  const std::vector<CoreSet> three{cores({0, 1}), cores({0, 1}), cores({0, 1})};
  EXPECT_FALSE(ranks_outnumber_cores(two));
  EXPECT_TRUE(ranks_outnumber_cores(three));
}

TEST(HostCores, RanksBoundToOneCoreOutnumberItWhateverTheOthersHave) {
  const std::vector<CoreSet> ranks{cores({5}), cores({5}), cores({700})};
  EXPECT_TRUE(ranks_outnumber_cores(ranks));
  EXPECT_EQ(cores({5, 700, 1023}).count(), 3);
}

TEST(HostCores, ThisProcessHasTheCoresItsAffinityAllows) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  const auto mine = CoreSet::of_this_process();
  EXPECT_EQ(mine.count(), CPU_COUNT(&mask));
  for (int core = 0; core < 64; ++core) {
    EXPECT_EQ((mine.words[0] >> core) & 1U, CPU_ISSET(core, &mask) ? 1U : 0U) << "core " << core;
  }
}

}  // namespace
}  // namespace meshcomm::detail
