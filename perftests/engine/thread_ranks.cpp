#include "thread_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::perf {

void run_as_threads(int ranks, const std::function<void(Communicator&)>& body) {
  auto world = InProcessWorld::create(ranks);
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> failures;  // rank, message
  ErrorCode code = ErrorCode::internal;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        InProcessBootstrap bootstrap(world, rank);
        auto comm = Communicator::create(bootstrap);
        body(comm);
      } catch (const Error& error) {
        const std::lock_guard lock(mutex);
        code = error.code();
        failures.emplace_back(rank, error.what());
      } catch (const std::exception& error) {
        const std::lock_guard lock(mutex);
        code = ErrorCode::backend_failure;
        failures.emplace_back(rank, error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (failures.empty()) return;
  // One message when every rank failed alike (a bad option), else each rank's.
  const bool alike = failures.size() == static_cast<std::size_t>(ranks) &&
                     std::all_of(failures.begin(), failures.end(),
                                 [&](const auto& failure) { return failure.second == failures.front().second; });
  std::string message = alike ? fmt::format("every rank: {}", failures.front().second) : std::string();
  for (std::size_t i = 0; !alike && i < failures.size(); ++i) {
    message += fmt::format("{}rank {}: {}", i == 0 ? "" : "; ", failures[i].first, failures[i].second);
  }
  throw Error(code, message, {.operation = "ranks as threads"});
}

}  // namespace meshcomm::perf
