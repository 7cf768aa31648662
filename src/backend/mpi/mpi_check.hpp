#pragma once

#include <mpi.h>

#include <string>

#include "../../work_state.hpp"
#include "../call_site.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// MPI's own text for an error code.
std::string mpi_error_text(int code);

/// Throws Error(backend_failure) naming `call` and MPI's message, with `context` and the code.
[[noreturn]] void throw_mpi_error(int code, const char* call, const ErrorContext& context);

/// Throws Error(backend_failure) naming `call` and MPI's message unless `code` is MPI_SUCCESS.
/// The one translation of MPI return codes in meshcomm. Inline, and `context` is copied only
/// for an error: it runs on every call and every test of a request.
inline void check_mpi(int code, const char* call, const ErrorContext& context) {
  if (code != MPI_SUCCESS) [[unlikely]] throw_mpi_error(code, call, context);
}

/// The same for a call made on behalf of `site`, whose context is built only for an error.
inline void check_mpi(int code, const char* call, const CallSite& site) {
  if (code != MPI_SUCCESS) [[unlikely]] throw_mpi_error(code, call, site.context());
}

/// Tests `request` until it completes or `deadline` passes, yielding the core between tests so
/// that oversubscribed ranks progress. Returns false at the deadline.
bool poll_request(MPI_Request& request, MPI_Status& status, Clock::time_point deadline, const ErrorContext& context);

}  // namespace meshcomm::detail
