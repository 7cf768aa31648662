#include "meshcomm/caller_bootstrap.hpp"

#include <thread>

#include <fmt/format.h>

#include "../environment.hpp"
#include "arrivals.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm {

namespace {

ErrorContext caller_context(const char* operation, int rank = -1) {
  return {.backend = "caller", .operation = operation, .rank = rank};
}

Error missing_field(const char* field, std::string_view why) {
  return Error(ErrorCode::invalid_argument, fmt::format("CallerBootstrap: {} {}", field, why),
               caller_context("CallerBootstrap"));
}

}  // namespace

CallerBootstrap::CallerBootstrap(CallerExchange exchange) : exchange_(std::move(exchange)) {
  if (exchange_.size < 1) {
    throw missing_field("size", fmt::format("= {} must be at least 1", exchange_.size));
  }
  if (exchange_.rank < 0 || exchange_.rank >= exchange_.size) {
    throw missing_field("rank", fmt::format("= {} must be in [0, size = {})", exchange_.rank, exchange_.size));
  }
  if (!exchange_.start_all_gather) throw missing_field("start_all_gather", "is required (it is empty)");
  if (!exchange_.test) throw missing_field("test", "is required (it is empty)");
  if (!exchange_.release) throw missing_field("release", "is required (it is empty)");
  exchange_.timeout = detail::resolve_timeout(exchange_.timeout);
}

void CallerBootstrap::complete(void* request, const char* operation) {
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds{1};
  while (true) {
    const int state = exchange_.test(request);
    if (state > 0) break;
    if (state < 0) {
      exchange_.release(request);
      throw Error(ErrorCode::backend_failure,
                  fmt::format("bootstrap {}: the caller's exchange reported failure (test returned {})", operation,
                              state),
                  caller_context(operation, exchange_.rank));
    }
    if (std::chrono::steady_clock::now() - start > exchange_.timeout) {
      std::optional<std::vector<int>> missing;
      if (exchange_.missing) missing = exchange_.missing(request);
      exchange_.release(request);
      throw detail::arrival_timeout("caller", operation, exchange_.rank, exchange_.timeout, missing);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds{1000});
  }
  exchange_.release(request);
}

std::vector<std::byte> CallerBootstrap::all_gather(std::span<const std::byte> mine) {
  std::vector<std::byte> gathered(mine.size() * static_cast<std::size_t>(exchange_.size));
  void* request = exchange_.start_all_gather(mine, gathered);
  if (request == nullptr) {
    throw Error(ErrorCode::backend_failure, "bootstrap all_gather: the caller's start_all_gather returned no request",
                caller_context("bootstrap all_gather", exchange_.rank));
  }
  complete(request, "all_gather");
  return gathered;
}

void CallerBootstrap::barrier() {
  if (!exchange_.start_barrier) {
    const std::byte here{1};
    (void)all_gather(std::span(&here, 1));
    return;
  }
  void* request = exchange_.start_barrier();
  if (request == nullptr) {
    throw Error(ErrorCode::backend_failure, "bootstrap barrier: the caller's start_barrier returned no request",
                caller_context("bootstrap barrier", exchange_.rank));
  }
  complete(request, "barrier");
}

}  // namespace meshcomm
