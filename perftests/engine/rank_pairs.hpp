#pragma once

// The point-to-point perftests' pairs of ranks (0-1, 2-3, ...): the even rank of each pair
// starts, the odd one answers or receives.

#include <string_view>

#include <fmt/format.h>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::perf {

/// The rank paired with this one.
[[nodiscard]] inline int partner(const Communicator& comm) { return comm.rank() ^ 1; }

/// Throws invalid_argument naming `perftest` unless the ranks pair up.
inline void require_pairs(const Communicator& comm, std::string_view perftest) {
  if (comm.size() % 2 != 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} pairs ranks up; run it on an even number of ranks, not {}", perftest, comm.size()));
  }
}

}  // namespace meshcomm::perf
