#include "meshcomm/mpi_bootstrap.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "../../environment.hpp"
#include "../../failure_seen.hpp"
#include "mpi_arrivals.hpp"
#include "mpi_check.hpp"

namespace meshcomm {

MpiSession::MpiSession(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return;
  int provided = 0;
  detail::check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread",
                    {.backend = "mpi", .operation = "MpiSession"});
  owns_ = true;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!owns_ || finalized != 0) return;
  // A healthy job finalises whenever its last rank gets there, however late: only after a
  // failure that may mean a peer is gone is the wait bounded.
  if (!detail::failure_seen()) {
    MPI_Finalize();
    return;
  }
  std::chrono::milliseconds timeout{0};
  try {
    timeout = detail::resolve_timeout(std::chrono::milliseconds{0});
  } catch (const Error&) {
    timeout = detail::kDefaultTimeout;  // a malformed MESHCOMM_TIMEOUT was reported where it was read
  }
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (finished.wait_for(lock, timeout, [&] { return done; })) return;
    std::fprintf(stderr,
                 "meshcomm: MPI_Finalize did not complete within %lld ms: a peer process has likely failed or "
                 "vanished; exiting without it\n",
                 static_cast<long long>(timeout.count()));
    std::fflush(stderr);
    std::_Exit(1);
  });
  MPI_Finalize();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  finished.notify_one();
  watchdog.join();
}

namespace {

ErrorContext bootstrap_context(const char* operation, int rank) {
  return {.backend = "mpi", .operation = operation, .rank = rank};
}

/// Waits for `request` of a bootstrap step that `arrivals` announced; at the timeout, names the
/// ranks that never arrived where the launcher can tell.
void wait_or_throw(MPI_Request& request, std::chrono::milliseconds timeout, const char* operation, int rank,
                   const detail::MpiArrivals& arrivals) {
  MPI_Status status;
  if (!detail::poll_request(request, status, detail::deadline_after(timeout), bootstrap_context(operation, rank))) {
    // A collective request cannot be cancelled: the job is stuck, so say which call and who is missing.
    throw Error(ErrorCode::timeout,
                fmt::format("{} did not complete within {} ms: {}", operation, timeout.count(),
                            detail::describe_arrivals(arrivals.missing(detail::kArrivalListen))),
                bootstrap_context(operation, rank));
  }
}

}  // namespace

MpiBootstrap::MpiBootstrap(MPI_Comm comm, std::chrono::milliseconds timeout)
    : comm_(comm), timeout_(detail::resolve_timeout(timeout)) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    throw Error(ErrorCode::invalid_argument, "MpiBootstrap: MPI is not initialised; create an MpiSession first",
                {.backend = "mpi", .operation = "MpiBootstrap"});
  }
  detail::check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", bootstrap_context("MpiBootstrap", -1));
  detail::check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", bootstrap_context("MpiBootstrap", rank_));
}

std::vector<std::byte> MpiBootstrap::all_gather(std::span<const std::byte> mine) {
  // Agree on the size first, so that a mismatch is an error rather than a truncation.
  const detail::MpiArrivals arrivals(comm_);
  arrivals.announce();
  std::uint64_t my_size = mine.size();
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Iallgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_, &request),
                    "MPI_Iallgather", bootstrap_context("bootstrap all_gather", rank_));
  wait_or_throw(request, timeout_, "bootstrap all_gather", rank_, arrivals);
  for (int other = 0; other < size_; ++other) {
    if (sizes[other] != my_size) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("bootstrap all_gather: this rank gave {} bytes but rank {} gave {}; every rank must "
                              "give the same number",
                              my_size, other, sizes[other]),
                  {.backend = "mpi", .operation = "bootstrap all_gather", .rank = rank_, .peer = other});
    }
  }
  std::vector<std::byte> all(mine.size() * static_cast<std::size_t>(size_));
  detail::check_mpi(MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                                   static_cast<int>(mine.size()), MPI_BYTE, comm_, &request),
                    "MPI_Iallgather", bootstrap_context("bootstrap all_gather", rank_));
  wait_or_throw(request, timeout_, "bootstrap all_gather", rank_, arrivals);
  return all;
}

void MpiBootstrap::barrier() {
  const detail::MpiArrivals arrivals(comm_);
  arrivals.announce();
  MPI_Request request = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier", bootstrap_context("bootstrap barrier", rank_));
  wait_or_throw(request, timeout_, "bootstrap barrier", rank_, arrivals);
}

}  // namespace meshcomm
