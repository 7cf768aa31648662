#pragma once

#include <mpi.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "../../bootstrap/arrivals.hpp"

namespace meshcomm::detail {

/// How long a rank whose step timed out waits for the others' arrival keys.
inline constexpr std::chrono::milliseconds kArrivalListen{1000};

/// Who arrived at a step of setting up a communicator (a bootstrap barrier or all-gather, a
/// duplication), told through the launcher's PMIx server (mpirun, srun, prterun) rather than
/// through MPI, whose collectives cannot say which rank is missing. Each rank puts a key for the
/// step (one per group of world ranks and count of steps on it) before it enters the collective;
/// a rank whose step timed out reads the others' keys. Without a PMIx server (or built without
/// PMIx) nothing is known.
class MpiArrivals {
 public:
  /// The step this process is about to enter on `comm`: the n-th on its group of world ranks.
  explicit MpiArrivals(MPI_Comm comm);

  /// Says that this rank has arrived (best effort: nothing if PMIx is unavailable).
  void announce() const;

  /// The ranks of `comm` that have not announced their arrival within `wait`, or nothing if
  /// that cannot be known here.
  [[nodiscard]] std::optional<std::vector<int>> missing(std::chrono::milliseconds wait) const;

 private:
  std::string key_;
  std::vector<int> world_ranks_;  ///< of `comm`'s ranks, in its order
  int rank_ = 0;
};

}  // namespace meshcomm::detail
