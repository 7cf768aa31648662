// The ucx backend's pending single-copy reads: every read left pending is done exactly once,
// whether its own receive or a wait of the process gets to it first, and one its receive did is
// not done again.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "backend/ucx/pending_reads.hpp"

namespace meshcomm::detail {
namespace {

/// A read that counts how often it was done, and like a receive does it at most once and then
/// leaves the list.
class CountedRead final : public PendingRead {
 public:
  explicit CountedRead(PendingReads& reads) : reads_(reads) {}
  void perform() noexcept override {
    if (done_.exchange(true)) return;
    reads_.remove(this);
    performed_.fetch_add(1);
  }
  [[nodiscard]] int performed() const { return performed_.load(); }

 private:
  PendingReads& reads_;
  std::atomic<bool> done_{false};
  std::atomic<int> performed_{0};
};

TEST(PendingReads, EveryWaitingReadIsDoneOnceAndTheListEmpties) {
  PendingReads reads;
  EXPECT_TRUE(reads.empty());
  std::vector<std::shared_ptr<CountedRead>> made;
  for (int read = 0; read < 5; ++read) {
    made.push_back(std::make_shared<CountedRead>(reads));
    reads.add(made.back());
  }
  EXPECT_FALSE(reads.empty());
  reads.perform_all();
  EXPECT_TRUE(reads.empty());
  reads.perform_all();
  for (const auto& read : made) EXPECT_EQ(read->performed(), 1);
}

TEST(PendingReads, AReadItsReceiveDidIsNotDoneAgain) {
  PendingReads reads;
  auto own = std::make_shared<CountedRead>(reads);
  auto other = std::make_shared<CountedRead>(reads);
  reads.add(own);
  reads.add(other);
  own->perform();  // the receive's own test got to it first; it removed itself
  EXPECT_FALSE(reads.empty());
  reads.perform_all();
  EXPECT_EQ(own->performed(), 1);
  EXPECT_EQ(other->performed(), 1);
  EXPECT_TRUE(reads.empty());
}

TEST(PendingReads, KeepsAReadAliveUntilItIsDone) {
  PendingReads reads;
  std::weak_ptr<CountedRead> watched;
  {
    auto read = std::make_shared<CountedRead>(reads);
    watched = read;
    reads.add(std::move(read));
  }
  EXPECT_FALSE(watched.expired());
  reads.perform_all();
  EXPECT_TRUE(watched.expired());
}

TEST(PendingReads, ReadsAddedWhileOtherThreadsPerformAreEachDoneOnce) {
  PendingReads reads;
  constexpr int kReads = 20000;
  std::vector<std::shared_ptr<CountedRead>> made;
  for (int read = 0; read < kReads; ++read) made.push_back(std::make_shared<CountedRead>(reads));
  std::atomic<bool> adding{true};
  std::thread waiter([&] {
    while (adding.load()) reads.perform_all();
  });
  for (int read = 0; read < kReads; ++read) {
    reads.add(made[read]);
    if (read % 3 == 0) made[read]->perform();  // some receives test first
  }
  adding.store(false);
  waiter.join();
  reads.perform_all();
  EXPECT_TRUE(reads.empty());
  for (const auto& read : made) ASSERT_EQ(read->performed(), 1);
}

}  // namespace
}  // namespace meshcomm::detail
