// How far MeasuredChoice's figure for the faster way follows its latest piece: by half (the
// default) one slow piece turns the choice, by a quarter it does not, and a lasting change turns
// the choice either way within a few pieces. With a switch margin, a way only a little faster does
// not turn the choice; with capped pieces, one very slow piece does not either. usual_way() tells
// a trial apart. Trials that run several pieces in a row see a way that is slower only on its
// first piece after the other. Early trials of a way measured far slower keep their share, and a
// trial run lengthens a trial by its pieces past the first.

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

/// Trials of way 1 (2 ns a byte against way 0's 1) among pieces 3000-5000 of `choice`.
int late_trials(MeasuredChoice& choice) {
  int trials = 0;
  for (int piece = 0; piece < 5000; ++piece) {
    const int way = choice.choose(kBytes);
    record(choice, way, way == 0 ? 1.0 : 2.0);
    if (piece >= 3000 && way == 1) ++trials;
  }
  return trials;
}

TEST(MeasuredChoice, TrialsThatCostMoreComeMoreRarely) {
  MeasuredChoice one_piece;
  // A trial costs (2 - 1) piece: one every 1 / 0.02 = 50 pieces.
  const int cheap = late_trials(one_piece);
  EXPECT_GE(cheap, 35);
  EXPECT_LE(cheap, 45);
  MeasuredChoice costly(MeasuredChoice::Settings{.pieces_per_trial = 8, .pieces_lost_switching = 8});
  // (2 - 1) * 8 + 8 = 16 pieces a trial: one every 800 pieces, each of 8 pieces of way 1 for a
  // caller that applies the choice that long; here, where it applies to one, 2 or 3 trials.
  const int dear = late_trials(costly);
  EXPECT_GE(dear, 2);
  EXPECT_LE(dear, 3);
}

/// Runs `choice` for `pieces` pieces, way 0 taking 1 ns a byte and way 1 `way1`; returns the
/// pieces of the last thousand that took way 1.
int way1_late(MeasuredChoice& choice, double way1, int pieces = 3000) {
  int late = 0;
  for (int piece = 0; piece < pieces; ++piece) {
    const int way = choice.choose(kBytes);
    record(choice, way, way == 0 ? 1.0 : way1);
    if (piece >= pieces - 1000 && way == 1) ++late;
  }
  return late;
}

TEST(MeasuredChoice, WithASwitchMarginAWayOnlyALittleFasterDoesNotTurnIt) {
  // Changes of way cost 4 pieces, so that trials come about every 200 pieces, not every 4.
  const MeasuredChoice::Settings settings{.pieces_lost_switching = 4, .switch_margin = 0.2};
  MeasuredChoice margin(settings);
  EXPECT_LE(way1_late(margin, 0.9), 20) << "10% faster: trials only";
  MeasuredChoice clear(settings);
  EXPECT_GE(way1_late(clear, 0.7), 980) << "30% faster: taken";
  MeasuredChoice none(MeasuredChoice::Settings{.pieces_lost_switching = 4});
  EXPECT_GE(way1_late(none, 0.9), 980) << "no margin: the faster by any amount";
}

TEST(MeasuredChoice, Way1IsFirstTriedAfterTheSetPiecesOfWay0) {
  MeasuredChoice choice(MeasuredChoice::Settings{.way0_pieces_first = 100});
  int first_way1 = -1;
  for (int piece = 0; piece < 200 && first_way1 < 0; ++piece) {
    const int way = choice.choose(kBytes);
    record(choice, way, way == 0 ? 2.0 : 1.0);
    if (way == 1) first_way1 = piece;
  }
  EXPECT_EQ(first_way1, 100);
  EXPECT_EQ(choice.choose(kBytes), 1) << "then the faster way is taken";
}

TEST(MeasuredChoice, CappedPiecesOneVerySlowPieceDoesNotTurnTheChoiceButALastingChangeDoes) {
  const MeasuredChoice::Settings capped{.latest_piece_weight = 0.25, .largest_piece_over_figure = 2.0};
  MeasuredChoice once(capped);
  settle_up_to_a_trial(once);
  // 30 ns a byte counts as 2: way 0's figure becomes 1.25, below way 1's 2 (uncapped: 8.25).
  record(once, 0, 30.0);
  EXPECT_EQ(once.choose(kBytes), 0);

  MeasuredChoice lasting(capped);
  settle_up_to_a_trial(lasting);
  // Way 0 now takes 4 ns a byte, counted as at most twice its figure: 1.25, 1.56, then 1.95,
  // 2.44, past way 1's 2.
  record(lasting, 0, 4.0);
  record(lasting, 0, 4.0);
  EXPECT_EQ(lasting.choose(kBytes), 0);
  record(lasting, 0, 4.0);
  record(lasting, 0, 4.0);
  EXPECT_EQ(lasting.choose(kBytes), 1);
}

/// Runs `choice` where each way's first piece after the other's takes 2 ns a byte, and its next
/// ones in a row 1 (way 0) or `way1_in_a_row` (way 1): 2000 pieces with way 1 at 3 in a row too,
/// then 5000 with it at 0.5. Returns the pieces of the last thousand that took way 1.
int way1_late_after_switching_costs(MeasuredChoice& choice) {
  int previous = 0;
  int late = 0;
  for (int piece = 0; piece < 7000; ++piece) {
    const int way = choice.choose(kBytes);
    const double in_a_row = way == 0 ? 1.0 : (piece < 2000 ? 3.0 : 0.5);
    record(choice, way, way == previous ? in_a_row : 2.0);
    previous = way;
    if (piece >= 6000 && way == 1) ++late;
  }
  return late;
}

TEST(MeasuredChoice, TrialRunsSeeAWayFasterOnlyPastItsFirstPieceAfterTheOther) {
  MeasuredChoice single(MeasuredChoice::Settings{.latest_piece_weight = 0.25});
  // Every trial of way 1 is one piece after way 0's: 2 ns a byte, never below way 0's 1, so way
  // 1 gets its trials alone (a piece in 50: a trial costs 2 - 1 piece, kept to 2% of them).
  EXPECT_LE(way1_late_after_switching_costs(single), 50);
  MeasuredChoice runs(MeasuredChoice::Settings{.latest_piece_weight = 0.25, .trial_run = 3});
  // The third piece of a trial takes 0.5: way 1 is taken, with trials of way 0 now and then.
  EXPECT_GE(way1_late_after_switching_costs(runs), 950);
}

/// Pieces of way 1 among the first `pieces` of `choice`, way 0 taking 1 ns a byte and way 1
/// `way1`, each way's first piece after the other's twice its own.
int early_way1_pieces(MeasuredChoice& choice, double way1, int pieces) {
  int previous = 0;
  int taken = 0;
  for (int piece = 0; piece < pieces; ++piece) {
    const int way = choice.choose(kBytes);
    const double own = way == 0 ? 1.0 : way1;
    record(choice, way, way == previous ? own : 2 * own);
    previous = way;
    taken += way;
  }
  return taken;
}

/// The settings of a choice between two ways of a whole collective call, rechecked in runs of
/// three calls (collectives/shm_single_copy.cpp).
MeasuredChoice::Settings whole_call_settings() {
  return {.latest_piece_weight = 0.25,
          .pieces_lost_switching = 1,
          .switch_margin = 0.05,
          .largest_piece_over_figure = 2.0,
          .trial_run = 3};
}

// Soon after the choice is made the slower way is rechecked sooner than in the long run, but no
// more often than keeps those trials to 5% of the time: a way measured 1.5 times slower (a trial
// of three pieces costs 3 * 0.5 + 1 = 2.5 pieces) is rechecked once in the first 125 pieces, after
// its first three, where one measured only 1.1 times slower (1.3 pieces a trial) is rechecked
// every 26 pieces at first.
TEST(MeasuredChoice, EarlyTrialsOfAFarSlowerWayKeepTheirShare) {
  MeasuredChoice far(whole_call_settings());
  EXPECT_EQ(early_way1_pieces(far, 1.5, 125), 6) << "its first three and one trial of three";
  MeasuredChoice close(whole_call_settings());
  EXPECT_GE(early_way1_pieces(close, 1.1, 125), 9) << "its first three and at least two trials";
}

// A trial that takes pieces_per_trial pieces and records a run of trial_run of them costs one more
// piece for each of the run's past its first, not pieces_per_trial more: with 32 and 16, a way
// measured 1.5 times slower (47 pieces at half a piece's loss) is rechecked once in the first 700
// pieces, after its first run, where counting 32 a piece of the run would put that past 1000.
TEST(MeasuredChoice, ATrialRunLengthensATrialByItsPiecesPastTheFirst) {
  MeasuredChoice choice(MeasuredChoice::Settings{.latest_piece_weight = 0.25, .pieces_per_trial = 32, .trial_run = 16});
  EXPECT_EQ(early_way1_pieces(choice, 1.5, 700), 32) << "its first run and one trial run";
}

// usual_way() says the way outside trials, so that a caller can tell a trial by a choose() that
// differs from it: way 0 while the ways are first measured, then the faster, whatever choose()
// returns for a trial.
TEST(MeasuredChoice, TheUsualWayIsTheFasterOneEvenAtATrial) {
  MeasuredChoice choice;
  EXPECT_EQ(choice.usual_way(kBytes), 0);
  int trials = 0;
  for (int piece = 0; piece < 2000; ++piece) {
    const int way = choice.choose(kBytes);
    const int usual = choice.usual_way(kBytes);
    if (piece >= 4) {
      EXPECT_EQ(usual, 1) << "piece " << piece << ": way 1 is the faster";
      trials += way != usual ? 1 : 0;
    }
    record(choice, way, way == 1 ? 1.0 : 2.0);
  }
  EXPECT_GE(trials, 1) << "trials of way 0 came, and usual_way() told them apart";
  EXPECT_LE(trials, 100);
}

}  // namespace
}  // namespace meshcomm::detail
