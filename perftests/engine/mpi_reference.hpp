#pragma once

// The mpi_best reference of the perftests: Open MPI's own call for an operation, timed both
// blocking and nonblocking (started, then waited for) on the same buffers as meshcomm's calls;
// each repeat takes the faster of the two.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "meshcomm/types.hpp"
#include "mpi_datatypes.hpp"  // detail::mpi_type and mpi_op, as the mpi backend maps them

namespace meshcomm::perf {

/// Which of Open MPI's two calls for an operation a reference slot times.
enum class MpiCall : std::uint8_t { blocking, nonblocking };

/// Open MPI's names for an operation's two calls, as the header line prints them.
struct MpiCallNames {
  std::string blocking;     // "MPI_Allgather"
  std::string nonblocking;  // "MPI_Iallgather"
};

/// One reference call: where it reads and writes, in MPI's terms.
struct MpiReference {
  MpiCall call = MpiCall::blocking;
  MPI_Comm comm = MPI_COMM_NULL;
  /// The input, or MPI_IN_PLACE in place.
  const void* send = nullptr;
  /// The start of the output buffer (in place: of the one buffer, as MPI_IN_PLACE expects).
  void* recv = nullptr;
  bool in_place = false;
  /// The element type of reductions (Open MPI's for meshcomm's); data movement counts bytes.
  MPI_Datatype element = MPI_DATATYPE_NULL;

  /// This process's rank in `comm`.
  [[nodiscard]] int rank() const {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return rank;
  }
  /// How many ranks `comm` has.
  [[nodiscard]] int size() const {
    int size = 1;
    MPI_Comm_size(comm, &size);
    return size;
  }

  /// Runs `blocking()`, or `nonblocking(&request)` and MPI_Wait, as `call` says. Both return an
  /// MPI error code; anything but MPI_SUCCESS throws.
  template <typename Blocking, typename Nonblocking>
  void run(Blocking&& blocking, Nonblocking&& nonblocking) const {
    int code = MPI_SUCCESS;
    if (call == MpiCall::blocking) {
      code = blocking();
    } else {
      MPI_Request request = MPI_REQUEST_NULL;
      code = nonblocking(&request);
      if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    if (code != MPI_SUCCESS) {
      throw std::runtime_error("Open MPI's reference call failed with code " + std::to_string(code));
    }
  }
};

/// `count` elements of `type` as the int count MPI takes.
inline int mpi_count(std::size_t count) { return static_cast<int>(count); }

}  // namespace meshcomm::perf
