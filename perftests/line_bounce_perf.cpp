// line_bounce_perf: one cache line bounced between the cores of a node's first two ranks,
// through memory both map (an MPI-3 shared window): the round trip that a small call between two
// ranks pays at least once to hand its data over, and which the host decides, not the library
// (on one core complex or across two, or, in a virtual machine, wherever the hypervisor has put
// the two vCPUs just now). Run it with the ranks of the perftest whose small calls it explains:
//
//   mpirun -np 2 build/perftests/line_bounce_perf [-n 20000] [-r 20] [--json FILE]
//
// Each round, the first rank stores an odd count in the line and waits for the second to store
// the next even one, -n times; the table gives each round's time per round trip, then the median,
// fastest and slowest round. Rounds follow each other without a pause, so that a host that moves
// the ranks' cores between rounds shows as rounds of two kinds.

#include <fmt/format.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/command_line.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// How long a rank waits for its partner's store before it gives up, naming it.
constexpr auto kPartnerTimeout = std::chrono::seconds(10);

/// Spins until `line` holds `value`; false where the partner has not stored it in time.
bool wait_for(std::atomic_ref<std::uint64_t> line, std::uint64_t value) {
  const auto deadline = Clock::now() + kPartnerTimeout;
  for (unsigned spins = 1;; ++spins) {
    if (line.load(std::memory_order_acquire) == value) return true;
    if (spins % 4096 == 0 && Clock::now() > deadline) return false;
  }
}

/// One round of `trips` round trips from `first_count` on; the first rank's time per round trip
/// in nanoseconds (the second rank's is not timed), or a negative value where the partner
/// stopped answering.
double bounce(std::atomic_ref<std::uint64_t> line, bool first, std::uint64_t first_count, int trips) {
  const auto start = Clock::now();
  for (std::uint64_t trip = 0; trip < static_cast<std::uint64_t>(trips); ++trip) {
    const std::uint64_t odd = first_count + 2 * trip + 1;
    if (first) {
      line.store(odd, std::memory_order_release);
      if (!wait_for(line, odd + 1)) return -1.0;
    } else {
      if (!wait_for(line, odd)) return -1.0;
      line.store(odd + 1, std::memory_order_release);
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / trips;
}

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  int trips = 20000;
  int rounds = 20;
  std::string json_path;
  meshcomm::perf::CommandLine command_line{
      "one cache line bounced between the cores of a node's first two ranks: the round trip under a small call"};
  command_line.option("-n,--iters", trips, "round trips per round").positive().show_default();
  command_line.option("-r,--rounds", rounds, "rounds, one after the other").positive().show_default();
  command_line.option("--json", json_path, "also write the results to this JSON file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  if (size < 2) {
    fmt::print(stderr, "line_bounce_perf: this node has {} rank; run at least 2 ranks on one node\n", size);
    MPI_Comm_free(&node);
    return 2;
  }
  // Two lines' worth from the first rank, so that one whole line lies within them.
  constexpr MPI_Aint kLine = 64;
  std::byte* base = nullptr;
  MPI_Win window;
  MPI_Win_allocate_shared(rank == 0 ? 2 * kLine : 0, 1, MPI_INFO_NULL, node, &base, &window);
  MPI_Aint bytes = 0;
  int unit = 0;
  MPI_Win_shared_query(window, 0, &bytes, &unit, &base);
  const auto at = (reinterpret_cast<std::uintptr_t>(base) + kLine - 1) / kLine * kLine;
  auto* word = reinterpret_cast<std::uint64_t*>(at);
  if (rank == 0) *word = 0;
  MPI_Barrier(node);

  const bool bounces = rank < 2;
  std::vector<double> times;
  int core = sched_getcpu();
  std::vector<int> every_core(static_cast<std::size_t>(size));
  MPI_Gather(&core, 1, MPI_INT, every_core.data(), 1, MPI_INT, 0, node);
  for (int round = 0; round < rounds; ++round) {
    MPI_Barrier(node);
    if (!bounces) continue;
    const auto first_count = static_cast<std::uint64_t>(round) * 2 * static_cast<std::uint64_t>(trips);
    const double nanoseconds = bounce(std::atomic_ref(*word), rank == 0, first_count, trips);
    if (nanoseconds < 0) {
      fmt::print(stderr, "line_bounce_perf: rank {} had no answer from rank {} within {} s in round {}\n", rank,
                 1 - rank, kPartnerTimeout.count(), round + 1);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    times.push_back(nanoseconds);
  }
  if (rank == 0) {
    fmt::print("# line_bounce_perf: ranks 0 and 1 of this node (on cores {} and {} as they started), {} round trips "
               "x {} rounds\n",
               every_core[0], every_core[1], trips, rounds);
    fmt::print("{:>7} {:>16}\n", "round", "round trip (ns)");
    for (std::size_t round = 0; round < times.size(); ++round) fmt::print("{:>7} {:>16.1f}\n", round + 1, times[round]);
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    fmt::print("# median {:.1f} ns, fastest {:.1f}, slowest {:.1f}\n", median, sorted.front(), sorted.back());
    if (!json_path.empty()) {
      const nlohmann::json record = {{"round_trips_per_round", trips},
                                     {"round_trip_ns", times},
                                     {"median_ns", median},
                                     {"fastest_ns", sorted.front()},
                                     {"slowest_ns", sorted.back()}};
      std::ofstream(json_path) << record.dump(1) << '\n';
    }
  }
  MPI_Win_free(&window);
  MPI_Comm_free(&node);
  return 0;
}
