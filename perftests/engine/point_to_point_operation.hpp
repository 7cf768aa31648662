#pragma once

// What the point-to-point perftests share: a buffer to send and one to receive, `count`
// elements each, never in place (one buffer cannot be sent and received at once), the send
// buffer holding the sending rank's payload.

#include "perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {

/// A perftest of messages between ranks rather than of a collective.
class PointToPointOperation : public PerfOperation {
 public:
  [[nodiscard]] bool has_in_place() const noexcept override { return false; }
  [[nodiscard]] PerfCounts counts(std::size_t count, int, int) const override {
    return {.send = count, .recv = count, .reported = count};
  }
  /// Fills the send buffer with this rank's payload (verifiable::payload(rank, 0, i)), once
  /// check_ranks() has let `comm` through.
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    check_ranks(comm);
    verifiable::fill_payload(send, 0, counts.send, settings.type, comm.rank(), 0);
  }
  /// Throws invalid_argument where the perftest cannot run on `comm`'s ranks; lets any through
  /// by default.
  virtual void check_ranks(const Communicator& /*comm*/) const {}
};

}  // namespace meshcomm::perf
