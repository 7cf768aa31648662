// How far MeasuredChoice's figure for the faster way follows its latest piece: by half (the
// default) one slow piece turns the choice, by a quarter it does not, and a lasting change turns
// the choice either way within a few pieces.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "measured_choice.hpp"

namespace meshcomm::detail {
namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;

void record(MeasuredChoice& choice, int way, double nanoseconds_per_byte) {
  const auto took = static_cast<std::int64_t>(nanoseconds_per_byte * static_cast<double>(kBytes));
  choice.record(kBytes, way, std::chrono::nanoseconds(took));
}

/// Settles `choice` on way 0 (1 ns a byte against way 1's 2), then runs up to a trial of way 1:
/// the choice after that is way 0's, and no trial comes for a while.
void settle_up_to_a_trial(MeasuredChoice& choice) {
  for (int piece = 0; piece < 1000; ++piece) {
    const int way = choice.choose(kBytes);
    record(choice, way, way == 0 ? 1.0 : 2.0);
  }
  int way = 0;
  for (std::uint32_t piece = 0; piece <= MeasuredChoice::kLongestTrialInterval && way == 0; ++piece) {
    way = choice.choose(kBytes);
    record(choice, way, way == 0 ? 1.0 : 2.0);
  }
  ASSERT_EQ(way, 1) << "a trial of the slower way came";
}

/// After one piece of way 0 at 4 ns a byte, the way chosen next.
int way_after_one_slow_piece(MeasuredChoice& choice) {
  settle_up_to_a_trial(choice);
  EXPECT_EQ(choice.choose(kBytes), 0);
  record(choice, 0, 4.0);
  return choice.choose(kBytes);
}

TEST(MeasuredChoice, ByDefaultOneSlowPieceTurnsTheChoice) {
  MeasuredChoice choice;
  // Way 0's figure becomes (1 + 4) / 2, past way 1's 2.
  EXPECT_EQ(way_after_one_slow_piece(choice), 1);
}

TEST(MeasuredChoice, WeighingTheLatestPieceAQuarterOneSlowPieceDoesNot) {
  MeasuredChoice choice(0.25);
  // Way 0's figure becomes 1 + (4 - 1) / 4 = 1.75, still below way 1's 2.
  EXPECT_EQ(way_after_one_slow_piece(choice), 0);
}

TEST(MeasuredChoice, WeighingTheLatestPieceAQuarterALastingChangeTurnsIt) {
  MeasuredChoice choice(0.25);
  settle_up_to_a_trial(choice);
  // Way 0 now takes 4 ns a byte: its figure goes 1.75, 2.31, past way 1's 2 in two pieces.
  int pieces = 0;
  while (choice.choose(kBytes) == 0 && pieces < 10) {
    record(choice, 0, 4.0);
    ++pieces;
  }
  EXPECT_EQ(pieces, 2);
}

}  // namespace
}  // namespace meshcomm::detail
