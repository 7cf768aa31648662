#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "mpi_timeout_report.hpp"
#include "process_liveness.hpp"

namespace meshcomm::detail {

/// One request of an MPI collective (native collectives, neighbourhood exchanges), what must
/// stay alive until it completes, and what to do then. A collective request cannot be cancelled,
/// so a timeout makes the communicator fatal.
class MpiCollectiveRequest final : public WorkState {
 public:
  /// `processes` (owned by the backend, which outlives the request) tell ended peers; null: not
  /// looked at.
  MpiCollectiveRequest(ErrorContext context, std::shared_ptr<FatalState> fatal,
                       const RankProcesses* processes = nullptr)
      : context_(std::move(context)), fatal_(std::move(fatal)), processes_(processes) {}

  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<int> counts;          ///< int arrays MPI reads (all_to_allv)
  std::shared_ptr<std::byte[]> scratch;  ///< a copy MPI reads from, from the backend's pool
  std::function<void()> after;      ///< runs once on completion

  /// A native collective's timeout first asks the other ranks where they are (`reports`, owned
  /// by the backend) and names them; `record` is this call.
  void report_timeouts_with(const MpiTimeoutReports* reports, const CallRecord& record) noexcept {
    reports_ = reports;
    record_ = record;
  }

  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// It marks the communicator fatal itself when MPI fails it or it times out.
  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& /*fatal*/) override { return true; }
  [[nodiscard]] const ErrorContext& context() const noexcept { return context_; }

 private:
  ErrorContext context_;
  /// Now and then, as it is tested incomplete: fails with peer_failure, and the communicator
  /// with it, if a rank's process is seen to have ended.
  void look_for_ended_rank();

  std::shared_ptr<FatalState> fatal_;
  const RankProcesses* processes_;
  const MpiTimeoutReports* reports_ = nullptr;
  CallRecord record_;
  bool done_ = false;
  LivenessSchedule liveness_;
};

}  // namespace meshcomm::detail
