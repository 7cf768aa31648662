#pragma once

// What the point-to-point perftests share: a buffer to send and one to receive, `count`
// elements each, never in place (one buffer cannot be sent and received at once).

#include "perf_operation.hpp"

namespace meshcomm::perf {

/// A perftest of messages between ranks rather than of a collective.
class PointToPointOperation : public PerfOperation {
 public:
  [[nodiscard]] bool has_in_place() const noexcept override { return false; }
  [[nodiscard]] PerfCounts counts(std::size_t count, int, int) const override {
    return {.send = count, .recv = count, .reported = count};
  }
};

}  // namespace meshcomm::perf
