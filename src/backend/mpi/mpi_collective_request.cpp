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
  if (flag == 0) return false;
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

}  // namespace meshcomm::detail
