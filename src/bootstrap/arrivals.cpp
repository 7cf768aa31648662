#include "arrivals.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshcomm::detail {

std::string describe_arrivals(const std::optional<std::vector<int>>& missing) {
  if (!missing) return "some rank of the communicator has not joined it";
  if (missing->empty()) {
    return "every rank arrived, but not within one timeout of the others: some gave up before the last came";
  }
  return fmt::format("{} {} never arrived at this step", missing->size() == 1 ? "rank" : "ranks",
                     fmt::join(*missing, ", "));
}

Error arrival_timeout(std::string_view bootstrap, std::string_view operation, int rank,
                      std::chrono::milliseconds timeout, const std::optional<std::vector<int>>& missing) {
  return Error(ErrorCode::timeout,
               fmt::format("bootstrap {} did not complete within {} ms: {}", operation, timeout.count(),
                           describe_arrivals(missing)),
               {.backend = std::string(bootstrap),
                .operation = fmt::format("bootstrap {}", operation),
                .rank = rank,
                .peer = missing && !missing->empty() ? missing->front() : -1});
}

}  // namespace meshcomm::detail
