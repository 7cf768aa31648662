#include "engine/shared_line.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <vector>

namespace meshcomm::perf {

namespace {

using Clock = std::chrono::steady_clock;

/// How long a rank waits for its partner's store before it gives up, naming it.
constexpr auto kPartnerTimeout = std::chrono::seconds(10);
constexpr MPI_Aint kLineBytes = 64;

/// Spins until `line` holds `value`; false where the partner has not stored it in time.
bool wait_for(std::atomic_ref<std::uint64_t> line, std::uint64_t value) {
  const auto deadline = Clock::now() + kPartnerTimeout;
  for (unsigned spins = 1;; ++spins) {
    if (line.load(std::memory_order_acquire) == value) return true;
    if (spins % 4096 == 0 && Clock::now() > deadline) return false;
  }
}

}  // namespace

SharedLine::SharedLine(MPI_Comm world) {
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_);
  MPI_Comm_rank(node_, &node_rank_);
  MPI_Comm_size(node_, &node_size_);
  // The cores the node's ranks may run on, all together, as the library counts them
  // (host_cores.hpp): a container's or mpirun's binding, not the cores the machine has.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    for (long core = 0; core < sysconf(_SC_NPROCESSORS_ONLN) && core < CPU_SETSIZE; ++core) CPU_SET(core, &allowed);
  }
  MPI_Allreduce(MPI_IN_PLACE, &allowed, static_cast<int>(sizeof allowed), MPI_BYTE, MPI_BOR, node_);
  node_cores_ = CPU_COUNT(&allowed);
  int core = sched_getcpu();
  if (node_rank_ == 0) cores_.resize(static_cast<std::size_t>(node_size_));
  MPI_Gather(&core, 1, MPI_INT, cores_.data(), 1, MPI_INT, 0, node_);
  if (!has_partner()) return;
  // Two lines' worth from the node's rank 0, so that one whole line lies within them.
  std::byte* base = nullptr;
  MPI_Win_allocate_shared(node_rank_ == 0 ? 2 * kLineBytes : 0, 1, MPI_INFO_NULL, node_, &base, &window_);
  MPI_Aint bytes = 0;
  int unit = 0;
  MPI_Win_shared_query(window_, 0, &bytes, &unit, &base);
  const auto at = (reinterpret_cast<std::uintptr_t>(base) + kLineBytes - 1) / kLineBytes * kLineBytes;
  line_ = reinterpret_cast<std::uint64_t*>(at);
  if (node_rank_ == 0) *line_ = 0;
  MPI_Barrier(node_);
}

SharedLine::~SharedLine() {
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

double SharedLine::bounce(int trips) {
  MPI_Barrier(node_);
  const std::uint64_t first = count_;
  count_ += 2 * static_cast<std::uint64_t>(trips);
  if (node_rank_ > 1) return 0.0;
  std::atomic_ref<std::uint64_t> line(*line_);
  const auto start = Clock::now();
  for (std::uint64_t trip = 0; trip < static_cast<std::uint64_t>(trips); ++trip) {
    const std::uint64_t odd = first + 2 * trip + 1;
    bool answered = true;
    if (node_rank_ == 0) {
      line.store(odd, std::memory_order_release);
      answered = wait_for(line, odd + 1);
    } else {
      answered = wait_for(line, odd);
      line.store(odd + 1, std::memory_order_release);
    }
    if (!answered) {
      throw std::runtime_error(fmt::format("rank {} of this node had no answer from its rank {} within {} s while "
                                           "they bounced a cache line",
                                           node_rank_, 1 - node_rank_, kPartnerTimeout.count()));
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / trips;
}

double SharedLine::median(int rounds, int trips) {
  std::vector<double> times;
  for (int round = 0; round < rounds; ++round) times.push_back(bounce(trips));
  std::nth_element(times.begin(), times.begin() + rounds / 2, times.end());
  return times[static_cast<std::size_t>(rounds / 2)];
}

}  // namespace meshcomm::perf
