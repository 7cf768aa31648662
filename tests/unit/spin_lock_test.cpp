// The spin lock excludes: threads that add under it lose no update, including while a holder
// sleeps long enough that waiters go through every stage of their backoff.

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "spin_lock.hpp"

namespace meshcomm::detail {
namespace {

TEST(SpinLock, ThreadsAddingUnderItLoseNothing) {
  SpinLock lock;
  long total = 0;
  constexpr int kThreads = 4;
  constexpr int kAdds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAdds; ++i) {
        std::lock_guard guard(lock);
        total = total + 1;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(total, long{kThreads} * kAdds);
}

TEST(SpinLock, WaitersGetItAfterALongHolder) {
  SpinLock lock;
  int order = 0;
  int waiter_saw = -1;
  lock.lock();
  std::thread waiter([&] {
    std::lock_guard guard(lock);
    waiter_saw = order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  order = 1;
  lock.unlock();
  waiter.join();
  EXPECT_EQ(waiter_saw, 1);
}

}  // namespace
}  // namespace meshcomm::detail
