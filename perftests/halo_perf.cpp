// halo_perf: halo exchange for sliding-window attention over a sharded sequence, every strategy
// against the head-sharding all-to-all that needs no halo (anemoi's shard_sequence vs
// shard_heads), forward and adjoint.
//
//   mpirun -np 2 build/perftests/halo_perf                     # anemoi o96: S 40320, C 1024, w 512
//   mpirun -np 2 build/perftests/halo_perf --quick --plot halo.png --json halo.json
//   build/perftests/halo_perf --threads 2 --memory cuda             # ranks as threads on one GPU
//                                                                   # (timed by CUDA events)
//
// For each strategy and direction: the time of one exchange (median over repeats of the mean
// over iterations, maximum over ranks; the strategies measured side by side), the bytes each rank sends, and the speedup over
// heads_alltoall, whose two transposes ([S/P, H, D] → [S, H/P, D] and back) are what a layer
// pays instead. `mpi_sendrecv` is two raw MPI_Sendrecv calls moving the p2p strategy's bytes.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "engine/plot.hpp"
#include "engine/side_by_side.hpp"
#include "engine/thread_ranks.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/halo.hpp"
#include "meshcomm/head_transpose.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::perf {
namespace {

struct HaloOptions {
  std::size_t seq = 40320;
  std::size_t window = 512;
  std::size_t channels = 1024;
  std::size_t heads = 16;
  std::string dtype = "f32";
  std::string strategy = "all";
  bool causal = false;
  bool quick = false;
  int iterations = 20;
  int warmup = 3;
  int repeats = 3;
  std::string json_path;
  std::string plot_path;
  MemoryKind memory = MemoryKind::host;
  int threads = 0;  ///< ranks as threads of this process (0: the mpirun processes)
};

/// `bytes` bytes in `memory`, every byte `fill`.
std::shared_ptr<std::byte> filled_buffer(std::size_t bytes, std::byte fill, MemoryKind memory) {
  std::vector<std::byte> host(bytes, fill);
  if (memory == MemoryKind::host) {
    std::shared_ptr<std::byte> buffer(new std::byte[bytes], std::default_delete<std::byte[]>());
    std::copy(host.begin(), host.end(), buffer.get());
    return buffer;
  }
  auto buffer = verifiable::device_bytes(bytes);
  verifiable::copy_to_device(buffer.get(), host.data(), bytes);
  return buffer;
}

/// One timed exchange: its name, direction, bytes per rank, and how to run it once.
struct Variant {
  std::string strategy;
  std::string direction;
  std::size_t bytes = 0;
  std::function<void()> run;
};

struct Result {
  std::string strategy;
  std::string direction;
  std::size_t seq;
  std::size_t bytes;
  double time_us;
};

std::vector<std::string> chosen_strategies(const std::string& text) {
  const std::vector<std::string> all = {"p2p", "neighbor_alltoallv", "mpi_neighbor", "mpi_sendrecv", "heads_alltoall"};
  if (text == "all") return all;
  std::string name = text == "neighbor_alltoall" ? "neighbor_alltoallv" : text;
  if (std::find(all.begin(), all.end(), name) == all.end()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--strategy {} is unknown; valid: all, p2p, neighbor_alltoall, mpi_neighbor, "
                            "mpi_sendrecv, heads_alltoall",
                            text));
  }
  return {name, "heads_alltoall"};
}

/// Measures every chosen strategy at one sequence length.
std::vector<Result> measure(Communicator& comm, const HaloOptions& options, std::size_t seq, DataType type) {
  const int size = comm.size();
  const int rank = comm.rank();
  std::vector<std::size_t> shard_rows;
  for (int r = 0; r < size; ++r) shard_rows.push_back(seq / size + (static_cast<std::size_t>(r) < seq % size ? 1 : 0));
  const std::size_t own = shard_rows[rank];
  const std::size_t left = options.causal ? options.window - 1 : options.window;
  const std::size_t right = options.causal ? 0 : options.window;
  const std::size_t row_bytes = options.channels * size_of(type);

  const MemoryKind memory = options.memory;
  const auto extended = filled_buffer((left + own + right) * row_bytes, std::byte{1}, memory);
  const auto sequence = filled_buffer(own * row_bytes, std::byte{2}, memory);
  const auto heads = filled_buffer(seq * row_bytes / size + row_bytes, std::byte{3}, memory);
  const auto stream_owner = memory == MemoryKind::cuda ? verifiable::new_stream() : nullptr;
  const StreamRef stream(stream_owner.get());

  std::vector<Variant> variants;
  std::vector<std::unique_ptr<HaloPlan>> plans;
  // Processes sharing a GPU: only p2p moves CUDA memory over mpi (through CUDA IPC).
  const bool ipc_only = memory == MemoryKind::cuda && comm.backend() == BackendKind::mpi;
  for (const auto& name : chosen_strategies(options.strategy)) {
    if (ipc_only && name != "p2p") {
      if (rank == 0) fmt::print("# {} skipped: on cuda memory it needs ranks as threads (--threads)\n", name);
      continue;
    }
    if (name == "heads_alltoall") {
      auto transpose = std::make_shared<HeadTranspose>(HeadTranspose::create(
          comm, {.shard_rows = shard_rows, .heads = options.heads, .head_dim = options.channels / options.heads,
                 .type = type, .memory = memory}));
      const std::size_t bytes = 2 * transpose->bytes_sent();
      auto both_ways = [transpose, sequence, heads, stream] {
        transpose->to_heads(sequence.get(), heads.get(), stream).wait();
        transpose->to_sequence(heads.get(), sequence.get(), stream).wait();
      };
      variants.push_back({name, "forward", bytes, both_ways});
      variants.push_back({name, "adjoint", bytes, both_ways});
      continue;
    }
    if (name == "mpi_sendrecv") {
      if (comm.backend() != BackendKind::mpi || memory != MemoryKind::host) continue;
      // The p2p strategy's bytes, moved by two raw MPI_Sendrecv calls (no periodic wrap).
      const int left_peer = rank > 0 ? rank - 1 : MPI_PROC_NULL;
      const int right_peer = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
      const std::size_t bytes = ((rank + 1 < size ? left : 0) + (rank > 0 ? right : 0)) * row_bytes;
      auto* base = extended.get();
      variants.push_back({name, "forward", bytes, [=] {
                            // my last `left` rows go right and become its left halo; my first `right` rows go left.
                            MPI_Sendrecv(base + (left + own - left) * row_bytes, static_cast<int>(left * row_bytes),
                                         MPI_BYTE, right_peer, 7, base, static_cast<int>(left * row_bytes), MPI_BYTE,
                                         left_peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                            MPI_Sendrecv(base + left * row_bytes, static_cast<int>(right * row_bytes), MPI_BYTE,
                                         left_peer, 8, base + (left + own) * row_bytes,
                                         static_cast<int>(right * row_bytes), MPI_BYTE, right_peer, 8, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE);
                          }});
      continue;
    }
    HaloStrategy strategy = name == "p2p" ? HaloStrategy::p2p
                            : name == "mpi_neighbor" ? HaloStrategy::mpi_neighbor
                                                     : HaloStrategy::neighbor_alltoallv;
    if (strategy == HaloStrategy::mpi_neighbor && (comm.backend() != BackendKind::mpi || memory != MemoryKind::host)) {
      continue;
    }
    plans.push_back(std::make_unique<HaloPlan>(HaloPlan::create(
        comm, {.shard_rows = shard_rows, .left = static_cast<std::int64_t>(left),
               .right = static_cast<std::int64_t>(right), .row_elements = options.channels, .type = type,
               .strategy = strategy, .memory = memory})));
    auto* plan = plans.back().get();
    auto* data = extended.get();
    variants.push_back({name, "forward", plan->bytes_sent(), [plan, data, stream] { plan->start(data, stream).wait(); }});
    variants.push_back(
        {name, "adjoint", plan->bytes_sent(), [plan, data, stream] { plan->start_adjoint(data, stream).wait(); }});
  }
  std::vector<std::function<void()>> bodies;
  for (const auto& variant : variants) bodies.push_back(variant.run);
  // Device buffers: CUDA events on the exchanges' stream.
  const Timer timer = memory == MemoryKind::cuda
                          ? Timer([queue = stream_owner.get()](const std::function<void()>& run) {
                              return verifiable::stream_milliseconds(queue, run) / 1e3;
                            })
                          : Timer(host_seconds);
  const auto seconds = time_side_by_side(comm, {options.iterations, options.warmup, options.repeats}, bodies, timer);
  std::vector<Result> results;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    results.push_back({variants[v].strategy, variants[v].direction, seq, variants[v].bytes, seconds[v] * 1e6});
  }
  return results;
}

void print_table(const std::vector<Result>& results) {
  std::map<std::string, double> heads_time;
  for (const auto& r : results) {
    if (r.strategy == "heads_alltoall") heads_time[r.direction + std::to_string(r.seq)] = r.time_us;
  }
  fmt::print("# {:>8} {:>20} {:>9} {:>14} {:>12} {:>10} {:>16}\n", "seq", "strategy", "direction", "bytes/rank",
             "time (us)", "GB/s", "vs heads_a2a");
  for (const auto& r : results) {
    const double heads = heads_time[r.direction + std::to_string(r.seq)];
    const std::string speedup = heads > 0 ? fmt::format("{:.1f}x", heads / r.time_us) : "-";
    fmt::print("  {:>8} {:>20} {:>9} {:>14} {:>12.1f} {:>10.2f} {:>16}\n", r.seq, r.strategy, r.direction, r.bytes,
               r.time_us, r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e3) : 0.0, speedup);
  }
}

/// Measures, prints (rank 0) and writes the records and plot for `comm`'s ranks.
void run_on(Communicator& comm, const HaloOptions& options, DataType type) {
  if (comm.rank() == 0) {
    fmt::print("# meshcomm halo_perf: {} ranks{}, seq {}, window {} ({}), channels {} ({} heads), {}, {} memory, "
               "iters {} x {} repeats (median), time = max over ranks\n",
               comm.size(), options.threads > 0 ? " (threads)" : "", options.seq, options.window, options.causal ? "causal: W-1 rows left" : "each side",
               options.channels, options.heads, options.dtype, to_string(options.memory), options.iterations,
               options.repeats);
  }
  std::vector<Result> results = measure(comm, options, options.seq, type);
  if (comm.rank() == 0) print_table(results);
  std::vector<Result> sweep;
  if (!options.plot_path.empty()) {
    for (std::size_t seq = options.seq / 8; seq < options.seq; seq *= 2) {
      if (seq / comm.size() < 2 * options.window + 1) continue;
      auto more = measure(comm, options, seq, type);
      sweep.insert(sweep.end(), more.begin(), more.end());
    }
    sweep.insert(sweep.end(), results.begin(), results.end());
  }
  if (comm.rank() == 0) {
    const auto& all = sweep.empty() ? results : sweep;
    if (!options.json_path.empty()) {
      std::map<std::string, double> heads_time;
      for (const auto& r : all) {
        if (r.strategy == "heads_alltoall") heads_time[r.direction + std::to_string(r.seq)] = r.time_us;
      }
      nlohmann::json records = nlohmann::json::array();
      for (const auto& r : all) {
        const double heads = heads_time[r.direction + std::to_string(r.seq)];
        records.push_back({{"strategy", r.strategy}, {"direction", r.direction}, {"ranks", comm.size()},
                           {"seq", r.seq}, {"window", options.window}, {"causal", options.causal},
                           {"channels", options.channels}, {"dtype", options.dtype},
                           {"memory", std::string(to_string(options.memory))}, {"bytes_per_rank", r.bytes},
                           {"time_us", r.time_us}, {"speedup_vs_heads", heads > 0 ? heads / r.time_us : 0.0}});
      }
      std::ofstream(options.json_path) << records.dump(2) << "\n";
      fmt::print("# JSON records: {}\n", options.json_path);
    }
    if (!options.plot_path.empty()) {
      std::map<std::string, PlotSeries> lines;
      for (const auto& r : sweep) {
        if (r.direction != "forward") continue;
        auto& line = lines[r.strategy];
        line.title = r.strategy;
        line.x.push_back(static_cast<double>(r.seq));
        line.y.push_back(r.time_us);
      }
      std::vector<PlotSeries> series;
      for (auto& [name, line] : lines) series.push_back(std::move(line));
      const auto problem = plot_lines(
          options.plot_path,
          {.title = fmt::format("halo exchange vs head all-to-all, {} ranks, window {}, {} channels {}", comm.size(),
                                options.window, options.channels, options.dtype),
           .x_label = "sequence length (rows)",
           .y_label = "time per forward exchange (us)"},
          series);
      if (problem.empty()) {
        fmt::print("# plot: {}\n", options.plot_path);
      } else {
        fmt::print(stderr, "halo_perf: no plot: {}\n", problem);
      }
    }
  }
}

int run(int argc, char** argv) {
  MpiSession session(argc, argv);
  int world_rank = 0;
  int world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  HaloOptions options;
  CLI::App app{"halo_perf: halo exchange strategies vs the head-sharding all-to-all (run it with mpirun)"};
  app.add_option("--seq", options.seq, "sequence rows S")->capture_default_str();
  app.add_option("--window", options.window, "window: w rows each side, or W with --causal (W-1 on the left)")
      ->capture_default_str();
  app.add_option("--channels", options.channels, "elements per row C (= heads x head_dim)")->capture_default_str();
  app.add_option("--heads", options.heads, "heads, for heads_alltoall (divisible by the ranks)")->capture_default_str();
  app.add_option("--dtype", options.dtype, "f32 or bf16")->capture_default_str()->check(CLI::IsMember({"f32", "bf16"}));
  app.add_option("--strategy", options.strategy,
                 "all, p2p, neighbor_alltoall, mpi_neighbor, mpi_sendrecv or heads_alltoall")
      ->capture_default_str();
  app.add_flag("--causal", options.causal, "causal window (left halo only)");
  app.add_flag("--quick", options.quick, "scale the default case down (S 4032, C 256, w 64)");
  app.add_option("-n,--iters", options.iterations, "timed exchanges per repeat")->capture_default_str();
  app.add_option("-w,--warmup", options.warmup, "untimed exchanges first")->capture_default_str();
  app.add_option("--repeat", options.repeats, "timed runs; the median is reported")->capture_default_str();
  app.add_option("--json", options.json_path, "write the records to this file");
  app.add_option("--plot", options.plot_path, "draw time against sequence length per strategy (PNG or .svg)");
  std::string memory = "host";
  app.add_option("--memory", memory, "host, or cuda: device buffers (ranks as threads on one GPU with --threads; the "
                                     "mpi_* baselines need host memory)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("-t,--threads", options.threads, "ranks as threads of this process (run without mpirun)")
      ->check(CLI::Range(1, 64));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return world_rank == 0 ? app.exit(error) : (error.get_exit_code() == 0 ? 0 : 2);
  }
  options.memory = memory == "cuda" ? MemoryKind::cuda : MemoryKind::host;
  if (options.quick) {
    options.seq = 4032;
    options.channels = 256;
    options.window = 64;
  }
  try {
    const DataType type = options.dtype == "bf16" ? DataType::bf16 : DataType::f32;
    if (options.channels % options.heads != 0) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--channels {} is not divisible by --heads {}", options.channels, options.heads));
    }
    if (options.threads > 0 && world_size > 1) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--threads {} runs the ranks inside one process, but mpirun started {}; use one or "
                              "the other",
                              options.threads, world_size));
    }
    if (options.threads > 0) {
      run_as_threads(options.threads, [&](Communicator& comm) { run_on(comm, options, type); });
    } else {
      MpiBootstrap bootstrap;
      auto comm = Communicator::create(bootstrap);
      run_on(comm, options, type);
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "halo_perf: rank {}: {}\n", world_rank, error.what());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run(argc, argv); }
