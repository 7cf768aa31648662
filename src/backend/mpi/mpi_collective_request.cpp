#include "mpi_collective_request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "mpi_check.hpp"

namespace meshcomm::detail {

bool MpiCollectiveRequest::test() {
  if (done_) return true;
  if (fatal_->is_set()) [[unlikely]] {
    // MPI cannot cancel a collective: the request stays with MPI, which may still use the buffers.
    throw fatal_->aborted_error(context_, "MPI cannot withdraw a collective, so its buffers must stay valid until "
                                          "the process ends");
  }
  int flag = 0;
  if (const int code = MPI_Test(&request, &flag, MPI_STATUS_IGNORE); code != MPI_SUCCESS) [[unlikely]] {
    try {
      throw_mpi_error(code, "MPI_Test", context_);
    } catch (const Error& error) {
      fatal_->set(error);
      throw;
    }
  }
  if (flag == 0) {
    look_for_ended_rank();
    return false;
  }
  done_ = true;
  if (after) after();
  return true;
}

void MpiCollectiveRequest::wait_until(Clock::time_point deadline) {
  if (poll_until([this] { return test(); }, deadline)) return;
  Error error(ErrorCode::timeout,
              fmt::format("MPI's {} did not complete in time: a rank has not joined it; the communicator cannot be "
                          "used again",
                          context_.operation),
              context_);
  fatal_->set(error);
  throw error;
}

void MpiCollectiveRequest::look_for_ended_rank() {
  // As MpiOperation: the clock every 1024 incomplete tests, the processes every kLivenessInterval
  // (from the first time the clock is read: a small collective completes before).
  if (processes_ == nullptr || (++incomplete_tests_ & 1023U) != 0) return;
  const auto now = Clock::now();
  if (liveness_checked_ == Clock::time_point{}) liveness_checked_ = now;
  if (now - liveness_checked_ < kLivenessInterval) return;
  liveness_checked_ = now;
  const auto ended = processes_->ended_except(context_.rank);
  if (ended.empty()) return;
  std::vector<std::string> names;
  for (int rank : ended) names.push_back(processes_->describe(rank));
  auto context = context_;
  context.peer = ended.front();
  Error error(ErrorCode::peer_failure,
              fmt::format("{} {} ended, so MPI's {} can never complete; the communicator cannot be used again",
                          fmt::join(names, ", "), ended.size() == 1 ? "has" : "have", context_.operation),
              context);
  fatal_->set(error);
  throw error;
}

}  // namespace meshcomm::detail
