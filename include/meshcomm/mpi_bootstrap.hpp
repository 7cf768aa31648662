#pragma once

// The one public header that includes mpi.h: include it only where MPI is wanted.

#include <mpi.h>

#include <chrono>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/export.hpp"

namespace meshcomm {

/// Initialises MPI (thread level MPI_THREAD_MULTIPLE) for its lifetime, unless something else
/// already did; finalises it only if it initialised it. MPI_Finalize waits for every process of
/// the job, so a vanished peer would keep it waiting forever: once this process has seen a
/// failure (an Error of code timeout, peer_failure, backend_failure or aborted), the destructor
/// gives MPI_Finalize the library's timeout (MESHCOMM_TIMEOUT, else 300 s) and past it says so on
/// stderr and ends the process with exit status 1. Without a failure it waits as long as the
/// slowest rank takes.
class MESHCOMM_API MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();

 private:
  bool owns_ = false;
};

/// A bootstrap over an MPI communicator (MPI_COMM_WORLD by default); communicators created from
/// it use the `mpi` backend on a duplicate of `comm`.
class MESHCOMM_API MpiBootstrap final : public Bootstrap {
 public:
  /// MPI must be initialised. `timeout` bounds the setup exchanges (zero: `MESHCOMM_TIMEOUT`).
  explicit MpiBootstrap(MPI_Comm comm = MPI_COMM_WORLD,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] std::string_view name() const noexcept override { return "mpi"; }
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

  /// The MPI communicator it was made from.
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
  /// The timeout of its exchanges.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
};

}  // namespace meshcomm
