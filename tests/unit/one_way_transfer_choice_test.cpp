// The ucx backend's choice between reading a one-way message in one copy and asking for it:
// each way is tried first, the faster then moves nearly every message, trials of the slower way
// cost little, and a change in either way's speed turns the choice.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backend/ucx/one_way_transfer_choice.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {
namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;

/// How fast each way moves a byte in a simulated stretch of traffic.
struct Speeds {
  double read_nanoseconds_per_byte = 1;
  double ask_nanoseconds_per_byte = 1;

  [[nodiscard]] double of(OneWayTransfer transfer) const {
    return transfer == OneWayTransfer::read_in_one_copy ? read_nanoseconds_per_byte : ask_nanoseconds_per_byte;
  }
};

/// What a stretch of `messages` one-way messages of `bytes` chose and how long they took.
struct Stretch {
  int read = 0;
  int ask = 0;
  double nanoseconds = 0;
  OneWayTransfer last = OneWayTransfer::read_in_one_copy;
};

Stretch move_messages(OneWayTransferChoice& choice, int messages, const Speeds& speeds, std::size_t bytes = kBytes) {
  Stretch stretch;
  for (int message = 0; message < messages; ++message) {
    const auto transfer = choice.choose(bytes);
    const double took = speeds.of(transfer) * static_cast<double>(bytes);
    choice.record(bytes, transfer, std::chrono::nanoseconds(static_cast<std::int64_t>(took)));
    (transfer == OneWayTransfer::read_in_one_copy ? stretch.read : stretch.ask) += 1;
    stretch.nanoseconds += took;
    stretch.last = transfer;
  }
  return stretch;
}

TEST(OneWayTransferChoice, EachWayMovesTwoMessagesFirst) {
  OneWayTransferChoice choice;
  const Speeds speeds{.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 5};
  EXPECT_EQ(move_messages(choice, 2, speeds).read, 2);
  EXPECT_EQ(move_messages(choice, 2, speeds).ask, 2);
  EXPECT_EQ(move_messages(choice, 3, speeds).read, 3);
}

class OneWayTransferTrials : public ::testing::TestWithParam<double> {};

// Over 20000 messages the trials of the slower way, and the four messages that try both ways
// first, add at most 3% to the time the faster way alone would take, whichever way is faster,
// for ways up to 20 times apart (beyond that the trials' longest interval bounds their number).
TEST_P(OneWayTransferTrials, CostAtMostThreePercent) {
  const double ratio = GetParam();
  constexpr int kMessages = 20000;
  for (const bool read_faster : {true, false}) {
    OneWayTransferChoice choice;
    const Speeds speeds = read_faster ? Speeds{.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = ratio}
                                      : Speeds{.read_nanoseconds_per_byte = ratio, .ask_nanoseconds_per_byte = 1};
    const auto stretch = move_messages(choice, kMessages, speeds);
    const double fastest = kMessages * static_cast<double>(kBytes);
    EXPECT_LE(stretch.nanoseconds, 1.03 * fastest) << "read faster: " << read_faster;
    EXPECT_GT(read_faster ? stretch.ask : stretch.read, 2) << "the slower way is tried again";
  }
}

INSTANTIATE_TEST_SUITE_P(SlowerBy, OneWayTransferTrials, ::testing::Values(1.01, 1.1, 1.5, 3.0, 10.0, 20.0));

TEST(OneWayTransferChoice, AFasterWayThatSlowsDownLosesAtOnce) {
  OneWayTransferChoice choice;
  move_messages(choice, 1000, {.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 2});
  // Read now takes four times as long: its figure, (1 + 4) / 2, passes ask's 2 after one message.
  const auto after = move_messages(choice, 2, {.read_nanoseconds_per_byte = 4, .ask_nanoseconds_per_byte = 2});
  EXPECT_EQ(after.last, OneWayTransfer::ask_for_payload);
}

TEST(OneWayTransferChoice, ASlowerWayThatSpeedsUpWinsAtItsNextTrial) {
  OneWayTransferChoice choice;
  // Long enough for the trials of ask to come at their longest interval.
  move_messages(choice, 20000, {.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 100});
  const Speeds ask_now_faster{.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 0.5};
  const auto until_found = move_messages(choice, OneWayTransferChoice::kLongestTrialInterval + 1, ask_now_faster);
  EXPECT_GE(until_found.ask, 1);
  const auto afterwards = move_messages(choice, 100, ask_now_faster);
  EXPECT_GE(afterwards.ask, 95);
}

TEST(OneWayTransferChoice, SizeClassesChooseApart) {
  OneWayTransferChoice choice;
  constexpr std::size_t kSmall = std::size_t{64} << 10;
  move_messages(choice, 500, {.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 2}, kSmall);
  move_messages(choice, 500, {.read_nanoseconds_per_byte = 2, .ask_nanoseconds_per_byte = 1}, kBytes);
  // Sizes within one power of two share what was measured.
  EXPECT_EQ(choice.choose(kSmall + 1000), OneWayTransfer::read_in_one_copy);
  EXPECT_EQ(choice.choose(kBytes + 1000), OneWayTransfer::ask_for_payload);
}

TEST(OneWayTransferChoice, APolicyOfOneWayAlwaysTakesIt) {
  OneWayTransferChoice read(OneWayPolicy::read);
  OneWayTransferChoice ask(OneWayPolicy::ask);
  EXPECT_EQ(move_messages(read, 100, {.read_nanoseconds_per_byte = 9, .ask_nanoseconds_per_byte = 1}).read, 100);
  EXPECT_EQ(move_messages(ask, 100, {.read_nanoseconds_per_byte = 1, .ask_nanoseconds_per_byte = 9}).ask, 100);
}

TEST(OneWayTransferChoice, TheEnvironmentNamesWhatIsValid) {
  ASSERT_EQ(::setenv("MESHCOMM_UCX_ONE_WAY", "read", 1), 0);
  EXPECT_EQ(one_way_policy_from_environment(), OneWayPolicy::read);
  ASSERT_EQ(::setenv("MESHCOMM_UCX_ONE_WAY", "ask", 1), 0);
  EXPECT_EQ(one_way_policy_from_environment(), OneWayPolicy::ask);
  ASSERT_EQ(::setenv("MESHCOMM_UCX_ONE_WAY", "fast", 1), 0);
  try {
    (void)one_way_policy_from_environment();
    ADD_FAILURE() << "MESHCOMM_UCX_ONE_WAY=fast was taken";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
    const std::string text = error.what();
    EXPECT_NE(text.find("MESHCOMM_UCX_ONE_WAY = 'fast'"), std::string::npos) << text;
    EXPECT_NE(text.find("measure"), std::string::npos) << text;
  }
  ASSERT_EQ(::unsetenv("MESHCOMM_UCX_ONE_WAY"), 0);
  EXPECT_EQ(one_way_policy_from_environment(), OneWayPolicy::measure);
}

}  // namespace
}  // namespace meshcomm::detail
