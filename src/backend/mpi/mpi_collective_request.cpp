#include "mpi_collective_request.hpp"

#include <fmt/format.h>

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
  const auto waiting = deadline - Clock::now();
  if (poll_until([this] { return test(); }, deadline)) return;
  auto context = context_;
  std::string where_the_others_are = "a rank has not joined it";
  if (reports_ != nullptr) {
    where_the_others_are = reports_->exchange(record_, report_listen_after(waiting), context.peer);
  }
  Error error(ErrorCode::timeout,
              fmt::format("MPI's {}{} did not complete in time: {}; the communicator cannot be used again",
                          context_.operation, reports_ != nullptr ? " (" + record_.describe() + ")" : std::string(),
                          where_the_others_are),
              context);
  fatal_->set(error);
  throw error;
}

void MpiCollectiveRequest::look_for_ended_rank() {
  if (processes_ == nullptr || !liveness_.due()) return;
  const auto ended = processes_->ended_except(context_.rank);
  if (ended.empty()) return;
  const Error error = processes_->failure(
      ended, context_,
      fmt::format("MPI's {} can never complete; the communicator cannot be used again", context_.operation));
  fatal_->set(error);
  throw error;
}

}  // namespace meshcomm::detail
