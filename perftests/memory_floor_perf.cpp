// memory_floor_perf: the floor under any host all-gather, reduce-scatter or all-reduce on this
// node — how fast its ranks, all at once, can move the collective's bytes through memory — beside
// Open MPI's own call, meshcomm's single-copy `shm` path and, for the all-gather, meshcomm's
// default on the same shared buffers and a single-copy all-gather of user buffers through the
// kernel (CMA), measured in one run.
//
//   mpirun -np 2 build/perftests/memory_floor_perf [--collective all_gather|reduce_scatter|all_reduce]
//                                                  [--backend mpi|ucx] [-b 4M] [-e 64M] [-f 4] [-n 10]
//                                                  [-r 7] [--json FILE]
//
// Sizes are as in the collectives' perftests' size columns: an all-gather's output, a
// reduce-scatter's or an all-reduce's input (f32, summed), bytes per rank. Every rank times its
// calls at once; each round runs every variant in turn (in another order each round, as the
// other perftests do), and the table gives the median over rounds of the slowest rank's time per
// call. Two paired columns (in each round, the reference at the row's placement over the row's
// time; the median of those ratios):
// - "mpi_best / x": the faster of Open MPI's two calls (blocking, and nonblocking as meshcomm's
//   `native` calls it), the one with the lower median over the rounds;
// - "floor / x": the read+write floor, streaming copies of what the collective must move (the
//   faster of a collective's floors, paired round by round). An all-gather: out of place every
//   rank reads and writes the whole output, in place all but its own block, from a block-sized
//   source per rank (the node's inputs are that big), and, where the ranks share one node, from
//   every rank's block in memory they all map, where an all-gather of shared buffers reads it:
//   each block is then read by every rank, and its ranks' reads can share the cache they share
//   (out of place at two ranks on the Intel VM of perftests/HISTORY.md 1.3-1.4x faster at 8-32 MiB
//   than each rank reading its own block `size` times). A
//   reduce-scatter: every rank reads an input's worth of blocks and writes their sum, its output,
//   by the faster of two kernels (sums in a cached chunk streamed out, or plain stores straight
//   into the output, as meshcomm's reductions write). An all-reduce: every rank reads its share
//   of every input and writes the sums into every output, an input's bytes each way (again the
//   faster of streamed and plain stores). No call can beat it by more than noise; its
//   "mpi_best / x" is the most that any call can gain over Open MPI's here.
// The store-only floor (streaming stores from a cached source, all-gather) counts the writes
// alone and is not reachable: the bytes must be read from somewhere. The all-reduce's two-phase
// floor is the traffic of a reduce-scatter then an all-gather, which `shm` moves. The floors hold
// for buffers larger than a core's share of the last-level cache: smaller ones stay cached, and
// a plain copy beats streaming stores there.

#include <fmt/format.h>

#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "engine/command_line.hpp"
#include "engine/perf_options.hpp"
#include "engine/process_backend.hpp"
#include "memory_floor/memory_floor.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

namespace memory_floor = meshcomm::perf::memory_floor;
using meshcomm::detail::StoreWidth;

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  std::string collective = "all_gather";
  std::string backend = "mpi";
  std::string min_text = "4M";
  std::string max_text = "64M";
  int factor = 4;
  int iterations = 10;
  int rounds = 7;
  std::string json_path;
  meshcomm::perf::CommandLine command_line{
      "the memory floor under a host all-gather, reduce-scatter or all-reduce, beside Open MPI's call and meshcomm's shm "
      "path"};
  command_line.option("--collective", collective, "which collective's traffic to measure")
      .one_of({"all_gather", "reduce_scatter", "all_reduce"})
      .show_default();
  meshcomm::perf::add_process_backend_option(command_line, backend);
  command_line.option("-b,--minbytes", min_text,
                      "smallest size per rank: an all-gather's output, a reduction's input (K, M, G suffixes)")
      .show_default();
  command_line.option("-e,--maxbytes", max_text, "largest size per rank").show_default();
  command_line.option("-f,--stepfactor", factor, "multiply the size by this much each step")
      .range(2, 1 << 20)
      .show_default();
  command_line.option("-n,--iters", iterations, "calls per variant per round").positive().show_default();
  command_line.option("-r,--rounds", rounds, "rounds; the median is reported").positive().show_default();
  command_line.option("--json", json_path, "also write the results to this JSON file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;

  meshcomm::MpiBootstrap bootstrap;
  auto comm = meshcomm::Communicator::create(bootstrap, {.backend = meshcomm::perf::process_backend(backend)});
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  const int size = comm.size();
  const int rank = comm.rank();
  const bool reduces = collective != "all_gather";
  // A reduction's size must leave every rank at least one f32 of its share.
  const std::size_t smallest = static_cast<std::size_t>(size) * (reduces ? sizeof(float) : 1);
  std::size_t min_bytes = 0;
  std::size_t max_bytes = 0;
  try {
    min_bytes = meshcomm::perf::parse_size(min_text, "-b");
    max_bytes = meshcomm::perf::parse_size(max_text, "-e");
    if (min_bytes < smallest) {
      throw std::invalid_argument(fmt::format("-b {} leaves less than {} per rank for {} ranks; give at least {}",
                                              min_text, reduces ? "one f32" : "a byte", size, smallest));
    }
    if (max_bytes < min_bytes) {
      throw std::invalid_argument(fmt::format("-e {} is smaller than -b {}; give -e at least {}", max_text, min_text,
                                              min_bytes));
    }
  } catch (const std::invalid_argument& error) {
    if (rank == 0) fmt::print(stderr, "memory_floor_perf: {}\n", error.what());
    MPI_Comm_free(&raw);
    return 2;
  }
  if (rank == 0) {
    fmt::print("# memory_floor_perf: {}, backend {}, {} ranks, all at once; {} calls x {} rounds, median of the "
               "slowest rank\n",
               collective, backend, size, iterations, rounds);
    fmt::print("{:>12} {:<34} {:>11} {:>9} {:>13} {:>10}  {}\n", "size (B)", "variant", "time (us)", "GB/s",
               "mpi_best / x", "floor / x", "what each rank does");
  }
  nlohmann::json records = nlohmann::json::array();
  const memory_floor::Run run{
      .comm = comm,
      .raw = raw,
      .iterations = iterations,
      .rounds = rounds,
      .widest = meshcomm::detail::has_store_width(StoreWidth::avx2) ? StoreWidth::avx2 : StoreWidth::sse2,
      .collective = collective.c_str(),
      .records = records};
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<std::size_t>(factor)) {
    const std::size_t wrong = collective == "all_gather"       ? memory_floor::measure_all_gather(run, bytes)
                              : collective == "reduce_scatter" ? memory_floor::measure_reduce_scatter(run, bytes)
                                                               : memory_floor::measure_all_reduce(run, bytes);
    if (wrong > 0) {
      if (rank == 0) fmt::print("# shm {}: {} wrong {} at {} B\n", collective, wrong,
                                reduces ? "elements" : "bytes", bytes);
      MPI_Comm_free(&raw);
      return 1;
    }
  }
  if (rank == 0 && !json_path.empty()) std::ofstream(json_path) << records.dump(2) << '\n';
  MPI_Comm_free(&raw);
  return 0;
}
