#pragma once

#include <cstdint>
#include <string>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// What a backend operation is, for its error messages.
struct OperationLabel {
  const char* name = "";
  std::int64_t sequence = -1;
};

/// Where a backend operation was issued, kept as plain fields on the per-call path and expanded
/// into an ErrorContext only when there is an error to report.
struct CallSite {
  OperationLabel label;  ///< its name is a string with static storage
  int rank = -1;
  int peer = -1;
  BackendKind backend = BackendKind::automatic;  ///< named only in context()

  [[nodiscard]] ErrorContext context() const {
    return {.backend = std::string(to_string(backend)), .operation = label.name, .rank = rank, .peer = peer,
            .sequence = label.sequence};
  }
};

}  // namespace meshcomm::detail
