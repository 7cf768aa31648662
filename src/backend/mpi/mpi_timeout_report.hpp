#pragma once

#include <mpi.h>

#include <chrono>
#include <string>

#include "call_record.hpp"
#include "work_state.hpp"

namespace meshcomm::detail {

/// The longest and shortest time a rank whose native collective timed out listens for the
/// others' reports.
inline constexpr std::chrono::milliseconds kReportListen{1000};
inline constexpr std::chrono::milliseconds kReportListenAtLeast{100};

/// How long a rank that timed out after waiting `waited` in a native collective listens for the
/// others' reports: as long again, within [kReportListenAtLeast, kReportListen]. Ranks that
/// entered the call up to that much later, with the same timeout, report within it; and a wait
/// of 300 ms does not end in an error a second later.
std::chrono::milliseconds report_listen_after(Clock::duration waited);

/// What the ranks say to each other when a native collective times out, so that its error names
/// who is where instead of "a rank has not joined": Open MPI's collectives cannot tell which
/// rank never arrived. Messages go on `comm` with a tag that nothing else uses.
class MpiTimeoutReports {
 public:
  MpiTimeoutReports(MPI_Comm comm, int tag, int rank, int size) : comm_(comm), tag_(tag), rank_(rank), size_(size) {}

  /// Tells every other rank that this one timed out waiting in `mine`, listens up to `listen`
  /// for the others' reports (less once all have come) and says what they showed: "rank 1 timed
  /// out in #5 reduce_scatter count=1024 f32 sum, another call; rank 2 sent no report within
  /// 500 ms: it never reached a collective of this call's number or is still waiting in one".
  /// `peer` becomes the first rank not waiting in the same call (-1: every rank was).
  std::string exchange(const CallRecord& mine, std::chrono::milliseconds listen, int& peer) const;

 private:
  MPI_Comm comm_;
  int tag_;
  int rank_;
  int size_;
};

}  // namespace meshcomm::detail
