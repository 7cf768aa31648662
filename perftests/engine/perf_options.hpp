#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::perf {

/// How ranks' times combine into the reported time (nccl-tests' -a).
enum class TimeAcross : std::uint8_t { rank0 = 0, mean = 1, min = 2, max = 3 };

/// What the speedup column compares against (--baseline).
enum class Baseline : std::uint8_t {
  mpi_best,  // Open MPI's blocking or nonblocking call, whichever has the lower median at a size
  native,    // meshcomm's own `native` algorithm, when --algo lists it
  none,
};

/// The command line of a perftest; nccl-tests' options keep their meanings.
struct PerfOptions {
  std::size_t min_bytes = 32 << 20;  // -b
  std::size_t max_bytes = 32 << 20;  // -e
  double step_factor = 1;            // -f (1: add step_bytes instead)
  std::size_t step_bytes = 1 << 20;  // -i
  int iterations = 20;               // -n
  int warmup = 5;                    // -w
  bool check = true;                 // -c
  DataType type = DataType::f32;     // -d
  ReduceOp op = ReduceOp::sum;       // -o
  int root = 0;                      // -r
  TimeAcross time_across = TimeAcross::max;  // -a
  BackendKind backend = BackendKind::mpi;    // --backend: the first one listed
  std::vector<BackendKind> backends{BackendKind::mpi};  // --backend mpi,ucx: each measured side by side
  int threads = 2;                           // -t: ranks as threads with --backend inproc
  std::vector<std::string> algorithms{""};   // --algo a,b,c: each size runs each in turn ("" = auto)
  int repeats = 1;                           // --repeat: median over this many timed runs
  std::string json_path;                     // --json
  bool shared_buffers = false;               // --buffers shared|both: meshcomm's allocate_shared
  bool user_buffers = true;                  // --buffers user|both: plain page-aligned memory, as a trainer's
  Baseline baseline = Baseline::mpi_best;    // --baseline
  MemoryKind memory = MemoryKind::host;      // --memory host|cuda
  bool new_input = false;                    // --new-input: senders write new bytes before each call
};

/// Parses `argc/argv`; returns nothing after printing help or an error (then `exit_code` is set).
std::optional<PerfOptions> parse_perf_options(int argc, char** argv, std::string_view program, bool quiet,
                                              int& exit_code);

/// The comma-separated items of `text` ("mpi,ucx"), empty ones kept ("" is one empty item).
std::vector<std::string> split_list(std::string_view text);

/// Parses "8", "64K", "1M", "2G" (powers of 1024) given to `option` (such as "-b"). Throws
/// std::invalid_argument naming the option and the text for anything else: a sign, a fraction, an
/// unknown unit, or more bytes than a size_t holds.
std::size_t parse_size(const std::string& text, std::string_view option);

}  // namespace meshcomm::perf
