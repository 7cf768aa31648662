// line_bounce_perf: one cache line bounced between the cores of a node's first two ranks,
// through memory both map (engine/shared_line.hpp): the round trip that a small call between two
// ranks pays at least once to hand its data over, and which the host sets, not the library. The
// other perftests print its median before and after their sizes; this one prints it round by
// round:
//
//   mpirun -np 2 build/perftests/line_bounce_perf [-n 20000] [-r 20] [--json FILE]
//
// Each round, the first rank stores an odd count in the line and waits for the second to store
// the next even one, -n times; the table gives each round's time per round trip, then the median,
// fastest and slowest round. Rounds follow each other without a pause, so that a host that moves
// the ranks' cores between rounds shows as rounds of two kinds.

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/shared_line.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

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

  meshcomm::perf::SharedLine line(MPI_COMM_WORLD);
  if (!line.has_partner()) {
    fmt::print(stderr, "line_bounce_perf: this node has 1 rank; run at least 2 ranks on one node\n");
    return 2;
  }
  std::vector<double> times;
  try {
    for (int round = 0; round < rounds; ++round) times.push_back(line.bounce(trips));
  } catch (const std::runtime_error& error) {
    fmt::print(stderr, "line_bounce_perf: {}\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (line.node_rank() != 0) return 0;
  fmt::print("# line_bounce_perf: ranks 0 and 1 of this node (on cores {} and {} as they started), {} round trips x "
             "{} rounds\n",
             line.cores()[0], line.cores()[1], trips, rounds);
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
  return 0;
}
