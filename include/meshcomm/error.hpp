#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "meshcomm/export.hpp"

namespace meshcomm {

/// What kind of failure an `Error` reports. See docs/errors.md for what each leaves usable.
enum class ErrorCode : std::uint8_t {
  invalid_argument,  ///< A caller's argument or configuration was wrong; nothing was started.
  timeout,           ///< A blocking wait ran past its timeout.
  size_mismatch,     ///< Two ranks disagreed about a message's size.
  peer_failure,      ///< A peer failed or vanished.
  unsupported,       ///< The backend or build cannot do what was asked.
  backend_failure,   ///< The underlying engine (MPI, UCX, NCCL, ...) reported an error.
  aborted,           ///< The communicator was aborted by an earlier fatal error.
  internal,          ///< A bug in meshcomm.
};

/// Name of an error code: "timeout", "invalid_argument", ...
MESHCOMM_API std::string_view to_string(ErrorCode code) noexcept;

/// Where an error happened. Fields that do not apply keep their defaults.
struct ErrorContext {
  std::string backend;         ///< "inproc", "mpi", ... or empty
  std::string operation;       ///< "irecv", "split", "MeshSpec::parse", ...
  int rank = -1;               ///< the reporting rank in the operation's communicator
  int peer = -1;               ///< the peer involved, in the same communicator
  std::int64_t sequence = -1;  ///< the operation's sequence number on its communicator
  int native_code = 0;         ///< the engine's own error code, where there is one
};

/// The one exception type meshcomm throws. `what()` holds the message and its context.
class MESHCOMM_API Error : public std::runtime_error {
 public:
  /// `message` says what was given, what was expected and what to do.
  Error(ErrorCode code, std::string message, ErrorContext context = {});

  /// The failure's kind.
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  /// Where it happened.
  [[nodiscard]] const ErrorContext& context() const noexcept { return context_; }
  /// The message without the context prefix.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  ErrorContext context_;
  std::string message_;
};

}  // namespace meshcomm
