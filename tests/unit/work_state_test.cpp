// A test() of a composed work polls every work of its current step, so that a poller that only
// calls test() (MPI_Test style, or the torch plugin's queue) moves a receive that sits behind a
// send still waiting for its peer; and the schedule starts its next step only once the whole
// step is complete. The cheap clock that operations and waits read is never ahead of the
// steady clock, and a deadline made from it is never early.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "work_state.hpp"

namespace meshcomm::detail {
namespace {

/// A transfer that completes once it has been tested `tests_to_complete` times.
class CountedTransfer final : public WorkState {
 public:
  explicit CountedTransfer(int tests_to_complete) : tests_to_complete_(tests_to_complete) {}
  bool test() override { return ++tests_ >= tests_to_complete_; }
  void wait_until(Clock::time_point /*deadline*/) override { tests_ = tests_to_complete_; }
  [[nodiscard]] int tests() const noexcept { return tests_; }

 private:
  int tests_to_complete_;
  int tests_ = 0;
};

constexpr std::chrono::milliseconds kTimeout{1000};

Work work_of(const std::shared_ptr<CountedTransfer>& transfer) { return Work(transfer, kTimeout); }

TEST(ScheduleWork, TestPollsEveryWorkOfTheStepPastAnIncompleteOne) {
  auto send = std::make_shared<CountedTransfer>(4);
  auto receive = std::make_shared<CountedTransfer>(4);
  auto next_step = std::make_shared<CountedTransfer>(1);
  int started_steps = 0;
  auto schedule = make_schedule(2, [&](int step) {
    ++started_steps;
    WorkList works;
    if (step == 0) {
      works.push_back(work_of(send));
      works.push_back(work_of(receive));
    } else {
      works.push_back(work_of(next_step));
    }
    return works;
  });
  Work work(schedule, kTimeout);  // the schedule started step 0 and tested it once
  for (int poll = 2; poll <= 3; ++poll) {
    EXPECT_FALSE(work.test());
    EXPECT_EQ(send->tests(), poll);
    EXPECT_EQ(receive->tests(), poll) << "the receive behind an incomplete send was not polled";
    EXPECT_EQ(started_steps, 1) << "the next step started before the first one was complete";
  }
  EXPECT_TRUE(work.test());
  EXPECT_EQ(started_steps, 2);
  EXPECT_EQ(next_step->tests(), 1);
}

TEST(GroupWork, TestPollsEveryPartPastAnIncompleteOne) {
  auto first = std::make_shared<CountedTransfer>(2);
  auto second = std::make_shared<CountedTransfer>(2);
  WorkList parts;
  parts.push_back(work_of(first));
  parts.push_back(work_of(second));
  Work work(std::make_shared<GroupWorkState>(std::move(parts)), kTimeout);
  EXPECT_FALSE(work.test());
  EXPECT_EQ(second->tests(), 1);
  EXPECT_TRUE(work.test());
}

TEST(CoarseClock, NeverAheadOfTheSteadyClockAndItsDeadlinesNeverEarly) {
  for (int round = 0; round < 10000; ++round) {
    const auto coarse = coarse_now();
    EXPECT_LE(coarse, Clock::now());
    const auto before = Clock::now();
    const auto deadline = deadline_after(std::chrono::milliseconds(3));
    ASSERT_GE(deadline, before + std::chrono::milliseconds(3)) << "a wait would give up early";
  }
  EXPECT_EQ(deadline_after(std::chrono::milliseconds::max()), Clock::time_point::max());
}

}  // namespace
}  // namespace meshcomm::detail
