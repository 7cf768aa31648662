#include "thread_ranks.hpp"

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "meshcomm/bootstrap.hpp"

namespace meshcomm::testing {

void run_ranks(int size, const std::function<void(Communicator&)>& body, std::chrono::milliseconds timeout,
               BackendKind backend) {
  auto world = InProcessWorld::create(size, timeout);
  std::mutex mutex;
  std::exception_ptr first_failure;
  int failed_rank = -1;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        InProcessBootstrap bootstrap(world, rank);
        auto comm = Communicator::create(bootstrap, {.backend = backend, .timeout = timeout});
        body(comm);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first_failure) {
          first_failure = std::current_exception();
          failed_rank = rank;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first_failure) {
    try {
      std::rethrow_exception(first_failure);
    } catch (const std::exception& error) {
      throw std::runtime_error("rank " + std::to_string(failed_rank) + " failed: " + error.what());
    }
  }
}

}  // namespace meshcomm::testing
