#include "mpi_check.hpp"

#include <fmt/format.h>

namespace meshcomm::detail {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<std::size_t>(length));
}

void throw_mpi_error(int code, const char* call, const ErrorContext& context) {
  ErrorContext with_code = context;
  with_code.native_code = code;
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(code, &error_class);
  if (error_class == MPI_ERR_TRUNCATE) {
    throw Error(ErrorCode::size_mismatch,
                fmt::format("{} failed: {}: a peer sent more than this rank's buffer holds, so the ranks disagree "
                            "about this call's size",
                            call, mpi_error_text(code)),
                std::move(with_code));
  }
  throw Error(ErrorCode::backend_failure, fmt::format("{} failed: {}", call, mpi_error_text(code)),
              std::move(with_code));
}

bool poll_request(MPI_Request& request, MPI_Status& status, Clock::time_point deadline, const ErrorContext& context) {
  for (unsigned spins = 0;; ++spins) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, &status), "MPI_Test", context);
    if (done != 0) return true;
    if ((spins & 63U) == 63U && Clock::now() >= deadline) return false;
    backoff(spins);
  }
}

}  // namespace meshcomm::detail
