// The ucx backend's queue of owed single-copy answers: every answer queued is delivered exactly
// once and strictly in the order queued, whether a receive's own test, a wait of the process or
// several threads at once deliver it; a sender matches the answers of a tag in the order they
// leave, so an answer that overtook another would make it send the wrong buffer.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/ucx/answer_queue.hpp"

namespace meshcomm::detail {
namespace {

/// Where answers go: the order they were delivered in.
class Sender {
 public:
  void take(int answer) {
    std::lock_guard lock(mutex_);
    taken_.push_back(answer);
  }
  [[nodiscard]] std::vector<int> taken() {
    std::lock_guard lock(mutex_);
    return taken_;
  }

 private:
  std::mutex mutex_;
  std::vector<int> taken_;
};

/// An answer numbered in the order it was queued.
class NumberedAnswer final : public QueuedAnswer {
 public:
  NumberedAnswer(Sender& sender, int number) : sender_(sender), number_(number) {}
  void deliver() noexcept override {
    delivered_.fetch_add(1);
    sender_.take(number_);
  }
  [[nodiscard]] int delivered() const { return delivered_.load(); }

 private:
  Sender& sender_;
  int number_;
  std::atomic<int> delivered_{0};
};

std::vector<int> numbers(int from, int to) {
  std::vector<int> made;
  for (int number = from; number < to; ++number) made.push_back(number);
  return made;
}

std::vector<std::shared_ptr<NumberedAnswer>> queue_answers(AnswerQueue& queue, Sender& sender, int count) {
  std::vector<std::shared_ptr<NumberedAnswer>> made;
  for (int number = 0; number < count; ++number) {
    made.push_back(std::make_shared<NumberedAnswer>(sender, number));
    queue.add(made.back());
  }
  return made;
}

TEST(AnswerQueue, DeliversEveryAnswerOnceInTheOrderQueued) {
  AnswerQueue queue;
  Sender sender;
  EXPECT_TRUE(queue.empty());
  const auto made = queue_answers(queue, sender, 5);
  EXPECT_FALSE(queue.empty());
  queue.deliver_all();
  EXPECT_TRUE(queue.empty());
  queue.deliver_all();
  EXPECT_EQ(sender.taken(), numbers(0, 5));
  for (const auto& answer : made) EXPECT_EQ(answer->delivered(), 1);
}

TEST(AnswerQueue, AnAnswerLeavesOnlyAfterTheAnswersQueuedBeforeIt) {
  AnswerQueue queue;
  Sender sender;
  const auto made = queue_answers(queue, sender, 5);
  queue.deliver_through(made[2].get());  // the third receive's own test
  EXPECT_EQ(sender.taken(), numbers(0, 3));
  EXPECT_FALSE(queue.empty());
  queue.deliver_through(made[1].get());  // delivered already: nothing more leaves
  EXPECT_EQ(sender.taken(), numbers(0, 3));
  queue.deliver_through(made[4].get());
  EXPECT_EQ(sender.taken(), numbers(0, 5));
  EXPECT_TRUE(queue.empty());
}

TEST(AnswerQueue, AWaitingSendDeliversOnlyTheOldestAnswer) {
  AnswerQueue queue;
  Sender sender;
  const auto made = queue_answers(queue, sender, 3);
  queue.deliver_oldest();
  EXPECT_EQ(sender.taken(), numbers(0, 1));
  queue.deliver_oldest();
  EXPECT_EQ(sender.taken(), numbers(0, 2));
  queue.deliver_through(made[2].get());
  queue.deliver_oldest();  // none left: nothing more leaves
  EXPECT_EQ(sender.taken(), numbers(0, 3));
  EXPECT_TRUE(queue.empty());
}

TEST(AnswerQueue, AnAnswerNotQueuedDeliversNothing) {
  AnswerQueue queue;
  Sender sender;
  const auto made = queue_answers(queue, sender, 3);
  NumberedAnswer stranger(sender, 99);
  queue.deliver_through(&stranger);
  EXPECT_TRUE(sender.taken().empty());
  EXPECT_EQ(stranger.delivered(), 0);
}

TEST(AnswerQueue, KeepsAnAnswerAliveUntilItIsDelivered) {
  AnswerQueue queue;
  Sender sender;
  std::weak_ptr<NumberedAnswer> watched;
  {
    auto answer = std::make_shared<NumberedAnswer>(sender, 0);
    watched = answer;
    queue.add(std::move(answer));
  }
  EXPECT_FALSE(watched.expired());
  queue.deliver_all();
  EXPECT_TRUE(watched.expired());
}

TEST(AnswerQueue, ThreadsDeliveringAtOnceKeepTheOrderQueued) {
  AnswerQueue queue;
  Sender sender;
  constexpr int kAnswers = 20000;
  std::vector<std::shared_ptr<NumberedAnswer>> made;
  for (int number = 0; number < kAnswers; ++number) made.push_back(std::make_shared<NumberedAnswer>(sender, number));
  std::atomic<int> queued{0};
  std::atomic<bool> adding{true};
  // A wait of the process that delivers whatever is queued.
  std::thread waiter([&] {
    while (adding.load()) queue.deliver_all();
  });
  // Receives testing themselves: each delivers through an answer queued a little earlier.
  std::thread tester([&] {
    while (adding.load()) {
      const int last = queued.load() - 1;
      if (last >= 0) queue.deliver_through(made[last / 2].get());
    }
  });
  for (int number = 0; number < kAnswers; ++number) {
    queue.add(made[number]);
    queued.store(number + 1);
    if (number % 3 == 0) queue.deliver_through(made[number].get());
  }
  adding.store(false);
  waiter.join();
  tester.join();
  queue.deliver_all();
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(sender.taken(), numbers(0, kAnswers));
  for (const auto& answer : made) ASSERT_EQ(answer->delivered(), 1);
}

}  // namespace
}  // namespace meshcomm::detail
