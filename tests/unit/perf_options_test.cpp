// The perftests' options: the size parser (what it takes, and that nothing wraps or turns
// negative into huge), the defaults that decide what a plain run compares, how the
// reference of the speedup columns is picked, and what --new-input writes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/new_input.hpp"
#include "engine/perf_options.hpp"
#include "engine/statistics.hpp"
#include "engine/turn_order.hpp"

namespace meshcomm::perf {
namespace {

TEST(PerfSizes, UnitsArePowersOf1024) {
  EXPECT_EQ(parse_size("0", "-b"), 0u);
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("64K", "-b"), 64u << 10);
  EXPECT_EQ(parse_size("1m", "-b"), 1u << 20);
  EXPECT_EQ(parse_size("2G", "-b"), std::size_t{2} << 30);
  EXPECT_EQ(parse_size("18446744073709551615", "-e"), ~std::size_t{0});
  EXPECT_EQ(parse_size("17179869183G", "-e"), std::size_t{17179869183} << 30);
}

TEST(PerfSizes, RejectsSignsFractionsUnitsAndOverflowNamingTheOption) {
  const std::pair<const char*, const char*> bad[] = {
      {"-1", "is not a size"},
      {"-1K", "is not a size"},
      {"+8", "is not a size"},
      {" 8", "is not a size"},
      {"", "is not a size"},
      {"1.5M", "unknown unit '.5M'"},
      {"8X", "unknown unit 'X'"},
      {"18446744073709551616", "more bytes than a size can hold"},
      {"17179869184G", "more bytes than a size can hold"},
      {"16777216T", "unknown unit 'T'"},
  };
  for (const auto& [text, why] : bad) {
    try {
      (void)parse_size(text, "-e");
      ADD_FAILURE() << "'" << text << "' was taken";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("-e ") + text + " "), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
    }
  }
}

/// Parses `arguments` after a program name.
std::optional<PerfOptions> parse(std::vector<std::string> arguments, int& exit_code) {
  arguments.insert(arguments.begin(), "all_gather_perf");
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  return parse_perf_options(static_cast<int>(argv.size()), argv.data(), "all_gather_perf", true, exit_code);
}

TEST(PerfStatistics, ReferenceIsTheCallWithTheLowerMedianNotEachRepeatsMinimum) {
  // Call 1 is faster by median though call 0 wins two of five repeats.
  const std::vector<std::vector<double>> calls{{10, 10, 3, 10, 3}, {5, 5, 5, 5, 5}};
  EXPECT_EQ(lowest_median(calls), 1u);
  EXPECT_EQ(lowest_median({{7, 7}}), 0u);
  EXPECT_EQ(lowest_median({{4, 4}, {4, 4}}), 0u) << "ties keep the first";
  // Paired against call 1, a variant as fast as call 1 is at 1.0, not below it.
  EXPECT_DOUBLE_EQ(paired_speedup(calls[1], {5, 5, 5, 5, 5}), 1.0);
}

TEST(PerfStatistics, TurnOrdersAreAlikeOnEveryRankAndGiveNoVariantAFixedNeighbour) {
  constexpr std::uint64_t seed = 12345;
  for (const std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{16}}) {
    for (int repeat = 0; repeat < 20; ++repeat) {
      const auto order = turn_order(seed, repeat, count);
      EXPECT_EQ(order, turn_order(seed, repeat, count)) << "every rank must draw the same order";
      auto sorted = order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::size_t> every(count);
      std::iota(every.begin(), every.end(), std::size_t{0});
      EXPECT_EQ(sorted, every) << "turn " << repeat << " of " << count << " variants";
    }
  }
  EXPECT_NE(turn_order(seed, 0, 16), turn_order(seed, 1, 16));
  EXPECT_NE(turn_order(seed, 0, 16), turn_order(seed + 1, 0, 16)) << "another run, other orders";
  // Over many turns each variant runs in every position and has every other variant one and
  // two turns before it (a Williams square's rows always put the same one two turns before).
  constexpr std::size_t count = 6;
  constexpr int repeats = 300;
  std::vector<std::vector<int>> runs_at(count, std::vector<int>(count, 0));      // [variant][position]
  std::vector<std::vector<int>> one_before(count, std::vector<int>(count, 0));   // [variant][predecessor]
  std::vector<std::vector<int>> two_before(count, std::vector<int>(count, 0));
  for (int repeat = 0; repeat < repeats; ++repeat) {
    const auto order = turn_order(seed, repeat, count);
    for (std::size_t position = 0; position < count; ++position) {
      ++runs_at[order[position]][position];
      if (position >= 1) ++one_before[order[position]][order[position - 1]];
      if (position >= 2) ++two_before[order[position]][order[position - 2]];
    }
  }
  const int expected_per_position = repeats / static_cast<int>(count);  // 50
  for (std::size_t variant = 0; variant < count; ++variant) {
    for (std::size_t other = 0; other < count; ++other) {
      EXPECT_GT(runs_at[variant][other], expected_per_position / 2) << "variant " << variant << " at " << other;
      if (other == variant) continue;
      EXPECT_GT(one_before[variant][other], 0) << "variant " << variant << " right after " << other;
      EXPECT_GT(two_before[variant][other], 0) << "variant " << variant << " two turns after " << other;
    }
  }
}

TEST(PerfOptions, DefaultsMeasureUserBuffersAgainstOpenMpisFasterCall) {
  int exit_code = 0;
  const auto options = parse({}, exit_code);
  ASSERT_TRUE(options.has_value());
  EXPECT_TRUE(options->user_buffers);
  EXPECT_FALSE(options->shared_buffers);
  EXPECT_EQ(options->baseline, Baseline::mpi_best);
}

TEST(PerfOptions, BuffersAndBaselineAreChosenByName) {
  int exit_code = 0;
  const auto both = parse({"--buffers", "both", "--baseline", "native"}, exit_code);
  ASSERT_TRUE(both.has_value());
  EXPECT_TRUE(both->user_buffers && both->shared_buffers);
  EXPECT_EQ(both->baseline, Baseline::native);
  const auto shared = parse({"--buffers", "shared", "--baseline", "none"}, exit_code);
  ASSERT_TRUE(shared.has_value());
  EXPECT_TRUE(!shared->user_buffers && shared->shared_buffers);
  EXPECT_EQ(shared->baseline, Baseline::none);
  EXPECT_FALSE(parse({"--baseline", "fastest"}, exit_code).has_value());
  EXPECT_NE(exit_code, 0);
}

TEST(PerfOptions, BackendsAreOneOrMpiAndUcxSideBySide) {
  int exit_code = 0;
  const auto plain = parse({}, exit_code);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->backends, std::vector<BackendKind>{BackendKind::mpi});
  const auto both = parse({"--backend", "ucx,mpi"}, exit_code);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->backends, (std::vector<BackendKind>{BackendKind::ucx, BackendKind::mpi}));
  EXPECT_EQ(both->backend, BackendKind::ucx) << "the first one listed";
  const auto inproc = parse({"--backend", "inproc"}, exit_code);
  ASSERT_TRUE(inproc.has_value());
  EXPECT_EQ(inproc->backends, std::vector<BackendKind>{BackendKind::inproc});
  for (const char* bad : {"mpi,nccl", "inproc,mpi", "mpi,mpi", "mpi,ucx,ucx", "mpi,", "tcp"}) {
    exit_code = 0;
    EXPECT_FALSE(parse({"--backend", bad}, exit_code).has_value()) << bad;
    EXPECT_NE(exit_code, 0) << bad;
  }
}

TEST(PerfOptions, NewInputIsAskedForAndRefusedOnDeviceMemory) {
  int exit_code = 0;
  const auto plain = parse({}, exit_code);
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->new_input) << "inputs stay as filled unless asked, as in nccl-tests";
  const auto asked = parse({"--new-input"}, exit_code);
  ASSERT_TRUE(asked.has_value());
  EXPECT_TRUE(asked->new_input);
  EXPECT_FALSE(parse({"--new-input", "--memory", "cuda"}, exit_code).has_value());
  EXPECT_EQ(exit_code, 2);
}

/// How many of the first `bytes` of `data`, outside the blocks' first words, are not call `call`'s
/// fill byte.
std::size_t bytes_not_filled(const std::vector<std::byte>& data, std::size_t bytes, std::uint32_t call) {
  std::size_t wrong = 0;
  for (std::size_t at = 0; at < bytes; ++at) {
    const bool block_start = at % kNewInputBlock < sizeof(std::uint16_t) && at - at % kNewInputBlock + 2 <= bytes;
    if (!block_start && data[at] != static_cast<std::byte>(1 + call % 120)) ++wrong;
  }
  return wrong;
}

TEST(PerfNewInput, EveryByteIsWrittenAndNoBlockStartsAsAnotherOrAsInTheCallsBefore) {
  constexpr std::size_t kBlocks = 1024;
  constexpr std::size_t kBytes = kBlocks * kNewInputBlock;
  constexpr std::uint32_t kCalls = 8;
  std::vector<std::vector<std::uint16_t>> starts(kCalls);  // each call's blocks' first words
  std::vector<std::byte> data(kBytes);
  for (std::uint32_t call = 0; call < kCalls; ++call) {
    std::fill(data.begin(), data.end(), std::byte{0});
    write_new_input(data.data(), kBytes, call);
    EXPECT_EQ(bytes_not_filled(data, kBytes, call), 0U) << "call " << call;
    for (std::size_t block = 0; block < kBlocks; ++block) {
      std::uint16_t word = 0;
      std::memcpy(&word, data.data() + block * kNewInputBlock, sizeof word);
      starts[call].push_back(word);
    }
    auto sorted = starts[call];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
        << "two blocks start alike, call " << call;
    for (std::uint32_t before = 0; before < call; ++before) {
      for (std::size_t block = 0; block < kBlocks; ++block) {
        ASSERT_NE(starts[call][block], starts[before][block]) << "block " << block << ", calls " << before << " and "
                                                               << call;
      }
    }
    for (std::size_t at = 0; at + sizeof(float) <= kBytes; at += sizeof(float)) {
      float value = 0;
      std::memcpy(&value, data.data() + at, sizeof value);
      ASSERT_EQ(std::fpclassify(value), FP_NORMAL) << "f32 at byte " << at << ", call " << call;
    }
  }
  // Sizes that end inside a block, inside a word, and below one word.
  for (std::size_t bytes : {kNewInputBlock + 1, std::size_t{4099}, std::size_t{1}}) {
    std::vector<std::byte> odd(2 * kNewInputBlock, std::byte{0});
    write_new_input(odd.data(), bytes, 3);
    EXPECT_EQ(bytes_not_filled(odd, bytes, 3), 0U) << bytes << " bytes";
    const auto end = odd.begin() + static_cast<std::ptrdiff_t>(bytes);
    EXPECT_EQ(std::count(end, odd.end(), std::byte{0}), odd.end() - end) << "nothing past " << bytes << " bytes";
  }
}

}  // namespace
}  // namespace meshcomm::perf
