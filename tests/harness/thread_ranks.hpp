#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <tuple>

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// Timeout for test communicators: long enough for a loaded 2-core machine, short enough that a
/// broken test fails instead of hanging.
inline constexpr std::chrono::milliseconds kTestTimeout{20'000};

/// Runs `body` on `size` ranks as threads of this process (over the inproc backend unless
/// `backend` names another), each with its own communicator, and rethrows the first failure of
/// any rank, naming the rank.
void run_ranks(int size, const std::function<void(Communicator&)>& body,
               std::chrono::milliseconds timeout = kTestTimeout, BackendKind backend = BackendKind::automatic);

}  // namespace meshcomm::testing

namespace meshcomm::testing {

/// Names a (kind, world size) test parameter "<kind>_world<size>" for GoogleTest, where the kind
/// has a `to_string`.
struct KindAndWorldName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return std::string(to_string(std::get<0>(info.param))) + "_world" + std::to_string(std::get<1>(info.param));
  }
};

}  // namespace meshcomm::testing
