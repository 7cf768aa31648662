#include "mpi_timeout_report.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "work_state.hpp"

namespace meshcomm::detail {

std::chrono::milliseconds report_listen_after(Clock::duration waited) {
  return std::clamp(std::chrono::ceil<std::chrono::milliseconds>(waited), kReportListenAtLeast, kReportListen);
}

std::string MpiTimeoutReports::exchange(const CallRecord& mine, std::chrono::milliseconds listen, int& peer) const {
  // Best effort throughout: this runs after a failure, and a dead peer must not make it fail.
  for (int other = 0; other < size_; ++other) {
    if (other == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&mine, sizeof mine, MPI_BYTE, other, tag_, comm_, &request) == MPI_SUCCESS) {
      MPI_Request_free(&request);  // a report is small: MPI sends it from its own buffer
    }
  }
  std::vector<std::optional<CallRecord>> heard(static_cast<std::size_t>(size_));
  int reports = 0;
  const auto deadline = deadline_after(listen);
  for (unsigned spins = 0; reports < size_ - 1; ++spins) {
    int waiting = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, tag_, comm_, &waiting, &status) != MPI_SUCCESS) break;
    if (waiting != 0) {
      CallRecord theirs;
      if (MPI_Recv(&theirs, sizeof theirs, MPI_BYTE, status.MPI_SOURCE, tag_, comm_, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        break;
      }
      auto& slot = heard[static_cast<std::size_t>(status.MPI_SOURCE)];
      if (!slot) ++reports;
      slot = theirs;
      continue;
    }
    if ((spins & 63U) == 63U && Clock::now() >= deadline) break;
    backoff(spins);
  }
  peer = -1;
  std::vector<std::string> others;
  std::vector<int> same, silent;
  for (int other = 0; other < size_; ++other) {
    if (other == rank_) continue;
    const auto& report = heard[static_cast<std::size_t>(other)];
    if (report && *report == mine) {
      same.push_back(other);
      continue;
    }
    if (peer < 0) peer = other;
    if (report) others.push_back(fmt::format("rank {} timed out in {}, another call", other, report->describe()));
    else silent.push_back(other);
  }
  if (!same.empty()) {
    others.insert(others.begin(), fmt::format("{} {} timed out in the same call", same.size() == 1 ? "rank" : "ranks",
                                              fmt::join(same, ",")));
  }
  if (!silent.empty()) {
    others.push_back(fmt::format("{} {} sent no report within {} ms: never reached a collective of this number, or "
                                 "still waiting in one",
                                 silent.size() == 1 ? "rank" : "ranks", fmt::join(silent, ","), listen.count()));
  }
  return fmt::format("{}", fmt::join(others, "; "));
}

}  // namespace meshcomm::detail
