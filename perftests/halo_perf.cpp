// halo_perf: halo exchange for sliding-window attention over a sharded sequence, every strategy
// against the head-sharding all-to-all that needs no halo (anemoi's shard_sequence vs
// shard_heads), forward and adjoint.
//
//   mpirun -np 2 build/perftests/halo_perf                     # anemoi o96: S 40320, C 1024, w 512
//   mpirun -np 2 build/perftests/halo_perf --quick --plot halo.png --json halo.json
//   build/perftests/halo_perf --threads 2 --memory cuda             # ranks as threads on one GPU
//                                                                   # (timed by CUDA events)
//   mpirun -np 2 build/perftests/halo_perf --backend ucx --buffers shared  # rma puts into mapped memory
//
// For each strategy and direction: the time of one exchange (median over repeats of the mean
// over iterations, maximum over ranks; the strategies measured side by side), the bytes each
// rank sends, and two speedups:
// - over heads_alltoall, whose two transposes ([S/P, H, D] → [S, H/P, D] and back) are what a
//   layer pays instead, in each direction;
// - over `mpi_isend_irecv`, the p2p strategy's forward bytes moved by concurrent raw Irecv/Isend
//   pairs, as a hand-written exchange does (`mpi_sendrecv`: the same bytes, two MPI_Sendrecv calls).
// On host memory a `copy_floor` row times each rank copying the rows it sends once, with memcpy,
// into a buffer of its own, every rank at once: no exchange can move its rows into the neighbours'
// buffers with less than that copy, so each forward row's speed against it says how
// much of its time is left to gain (the `vs copy_floor` column; below 1 for every exchange).

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/plot.hpp"
#include "engine/process_backend.hpp"
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
  std::string backend = "mpi";
  bool shared_buffers = false;  ///< extended buffers from allocate_shared (rma puts straight into them)
  bool touch = false;           ///< each forward exchange ends with its rank reading the halo rows
};

std::atomic<std::uint64_t> halo_sum;  ///< where read_halo leaves its sum, so that the reads happen

/// Reads every cache line of the halo rows, as the attention that follows an exchange does: a
/// strategy that leaves the rows in the sender's cache (puts) pays for it here.
void read_halo(const std::byte* extended, std::size_t left, std::size_t own, std::size_t right, std::size_t row_bytes) {
  std::uint64_t sum = 0;
  auto add = [&](const std::byte* from, std::size_t bytes) {
    for (std::size_t i = 0; i + 8 <= bytes; i += 64) {
      std::uint64_t word;
      std::memcpy(&word, from + i, sizeof word);
      sum += word;
    }
  };
  add(extended, left * row_bytes);
  add(extended + (left + own) * row_bytes, right * row_bytes);
  halo_sum.store(sum, std::memory_order_relaxed);
}

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
  std::shared_ptr<const HaloPlan> plan;  ///< the plan it times, where it has one
};

struct Result {
  std::string strategy;
  std::string direction;
  std::size_t seq;
  std::size_t bytes;
  double time_us;
};

/// The raw Open MPI exchanges that move the p2p strategy's bytes: the baseline (concurrent
/// Irecv/Isend pairs, as a hand-written halo exchange does) and two sequential MPI_Sendrecv calls.
constexpr const char* kRawExchange = "mpi_isend_irecv";
constexpr const char* kRawSendrecv = "mpi_sendrecv";
/// Each rank's copy of the rows it sends into a buffer of its own: the least any exchange costs.
constexpr const char* kCopyFloor = "copy_floor";

std::vector<std::string> chosen_strategies(const std::string& text) {
  const std::vector<std::string> all = {"p2p",        "neighbor_alltoallv", "mpi_neighbor",  "rma", kRawExchange,
                                        kRawSendrecv, kCopyFloor,           "heads_alltoall"};
  if (text == "all") return all;
  std::string name = text == "neighbor_alltoall" ? "neighbor_alltoallv" : text;
  if (std::find(all.begin(), all.end(), name) == all.end()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--strategy {} is unknown; valid: all, {}", text, fmt::join(all, ", ")));
  }
  std::vector<std::string> chosen{name};
  for (const char* baseline : {kRawExchange, kCopyFloor, "heads_alltoall"}) {
    if (name != baseline) chosen.emplace_back(baseline);
  }
  return chosen;
}

/// What one sequence length's variants share across communicators.
struct Case {
  std::vector<std::size_t> shard_rows;
  std::size_t own = 0;
  std::size_t left = 0;
  std::size_t right = 0;
  std::size_t row_bytes = 0;
  DataType type = DataType::f32;
  std::shared_ptr<std::byte> sequence;
  std::shared_ptr<std::byte> heads;
  StreamRef stream;
};

/// heads_alltoall: what a head-sharded layer pays instead of a halo, each direction timed as it
/// runs. Forward: the activations go to heads ([S/P, H, D] → [S, H/P, D]) before attention and
/// back after. Adjoint: the output gradient goes to heads (to_sequence's adjoint) and the input
/// gradient back (to_heads'), on buffers of their own.
void add_head_transposes(Communicator& comm, const HaloOptions& options, const Case& shape,
                         std::vector<Variant>& variants) {
  auto transpose = std::make_shared<HeadTranspose>(HeadTranspose::create(
      comm, {.shard_rows = shape.shard_rows, .heads = options.heads, .head_dim = options.channels / options.heads,
             .type = shape.type, .memory = options.memory}));
  const std::size_t bytes = 2 * transpose->bytes_sent();
  const std::size_t heads_bytes = transpose->sequence_rows() * transpose->local_heads() *
                                  (options.channels / options.heads) * size_of(shape.type);
  auto both_ways = [transpose, stream = shape.stream](std::shared_ptr<std::byte> sequence,
                                                      std::shared_ptr<std::byte> heads) {
    return [transpose, stream, sequence, heads] {
      transpose->to_heads(sequence.get(), heads.get(), stream).wait();
      transpose->to_sequence(heads.get(), sequence.get(), stream).wait();
    };
  };
  variants.push_back({"heads_alltoall", "forward", bytes, both_ways(shape.sequence, shape.heads)});
  variants.push_back({"heads_alltoall", "adjoint", bytes,
                      both_ways(filled_buffer(shape.own * shape.row_bytes, std::byte{4}, options.memory),
                                filled_buffer(heads_bytes, std::byte{5}, options.memory))});
}

/// The rows the p2p strategy's forward sends from a rank's extended buffer (no periodic wrap):
/// its last `left` rows go right and become that rank's left halo, its first `right` rows go
/// left; nothing toward a neighbour it does not have.
struct SentRows {
  const std::byte* to_right = nullptr;  ///< rows left+own-left .. left+own
  std::size_t to_right_bytes = 0;
  const std::byte* to_left = nullptr;
  std::size_t to_left_bytes = 0;

  SentRows(const Communicator& comm, const Case& shape, const std::byte* extended)
      : to_right(extended + shape.own * shape.row_bytes),
        to_right_bytes(comm.rank() + 1 < comm.size() ? shape.left * shape.row_bytes : 0),
        to_left(extended + shape.left * shape.row_bytes),
        to_left_bytes(comm.rank() > 0 ? shape.right * shape.row_bytes : 0) {}

  [[nodiscard]] std::size_t bytes() const noexcept { return to_right_bytes + to_left_bytes; }
};

/// The p2p strategy's forward bytes (SentRows) moved by raw Open MPI calls on `extended`.
void add_raw_exchange(const std::string& name, Communicator& comm, const HaloOptions& options, const Case& shape,
                      std::byte* extended, std::vector<Variant>& variants) {
  const int rank = comm.rank();
  const int left_peer = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right_peer = rank + 1 < comm.size() ? rank + 1 : MPI_PROC_NULL;
  const auto& [shard_rows, own, left, right, row_bytes, type, sequence, heads, stream] = shape;
  const SentRows sent(comm, shape, extended);
  const std::size_t bytes = sent.bytes();
  const std::byte* to_right = sent.to_right;
  std::byte* from_left = extended;
  const std::byte* to_left = sent.to_left;
  std::byte* from_right = extended + (left + own) * row_bytes;
  const int left_count = static_cast<int>(left * row_bytes);
  const int right_count = static_cast<int>(right * row_bytes);
  const bool touch = options.touch;
  auto finish = [=, left = left, own = own, right = right, row_bytes = row_bytes] {
    if (touch) read_halo(extended, left, own, right, row_bytes);
  };
  if (name == kRawSendrecv) {
    variants.push_back({name, "forward", bytes, [=] {
                          MPI_Sendrecv(to_right, left_count, MPI_BYTE, right_peer, 7, from_left, left_count, MPI_BYTE,
                                       left_peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          MPI_Sendrecv(to_left, right_count, MPI_BYTE, left_peer, 8, from_right, right_count, MPI_BYTE,
                                       right_peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          finish();
                        }});
    return;
  }
  variants.push_back({name, "forward", bytes, [=] {
                        std::array<MPI_Request, 4> requests{};
                        MPI_Irecv(from_left, left_count, MPI_BYTE, left_peer, 7, MPI_COMM_WORLD, &requests[0]);
                        MPI_Irecv(from_right, right_count, MPI_BYTE, right_peer, 8, MPI_COMM_WORLD, &requests[1]);
                        MPI_Isend(to_right, left_count, MPI_BYTE, right_peer, 7, MPI_COMM_WORLD, &requests[2]);
                        MPI_Isend(to_left, right_count, MPI_BYTE, left_peer, 8, MPI_COMM_WORLD, &requests[3]);
                        MPI_Waitall(4, requests.data(), MPI_STATUSES_IGNORE);
                        finish();
                      }});
}

/// The copy floor of the p2p strategy's forward: each rank copies the rows it sends (SentRows)
/// once, with memcpy, into a buffer of its own.
void add_copy_floor(const Communicator& comm, const Case& shape, const std::byte* extended,
                    std::vector<Variant>& variants) {
  const SentRows sent(comm, shape, extended);
  auto copies = std::make_shared<std::vector<std::byte>>(sent.bytes(), std::byte{6});
  variants.push_back({kCopyFloor, "forward", sent.bytes(), [sent, copies] {
                        std::memcpy(copies->data(), sent.to_right, sent.to_right_bytes);
                        std::memcpy(copies->data() + sent.to_right_bytes, sent.to_left, sent.to_left_bytes);
                      }});
}

/// Adds `comm`'s variants of every chosen strategy; `suffix` tells backends apart ("@ucx") when
/// several run side by side, and `baselines` adds the raw MPI and head all-to-all references.
void add_variants(Communicator& comm, const HaloOptions& options, const Case& shape, const std::string& suffix,
                  bool baselines, std::vector<Variant>& variants, std::vector<std::shared_ptr<void>>& keep) {
  const int rank = comm.rank();
  const auto& [shard_rows, own, left, right, row_bytes, type, sequence, heads, stream] = shape;
  const MemoryKind memory = options.memory;
  std::shared_ptr<std::byte> extended = filled_buffer((left + own + right) * row_bytes, std::byte{1}, memory);
  if (options.shared_buffers && memory == MemoryKind::host) {
    auto shared = std::make_shared<SharedBuffer>(comm.allocate_shared((left + own + right) * row_bytes));
    std::copy_n(extended.get(), (left + own + right) * row_bytes, static_cast<std::byte*>(shared->data()));
    extended = std::shared_ptr<std::byte>(shared, static_cast<std::byte*>(shared->data()));
  }
  keep.push_back(extended);
  // Processes sharing a GPU: only p2p moves CUDA memory over mpi (through CUDA IPC).
  const bool ipc_only = memory == MemoryKind::cuda && comm.backend() == BackendKind::mpi;
  for (const auto& name : chosen_strategies(options.strategy)) {
    if (ipc_only && name != "p2p") {
      if (rank == 0) fmt::print("# {} skipped: on cuda memory it needs ranks as threads (--threads)\n", name);
      continue;
    }
    if (name == "heads_alltoall") {
      if (!baselines) continue;
      add_head_transposes(comm, options, shape, variants);
      continue;
    }
    if (name == kCopyFloor) {
      if (baselines && memory == MemoryKind::host) add_copy_floor(comm, shape, extended.get(), variants);
      continue;
    }
    if (name == kRawExchange || name == kRawSendrecv) {
      if (baselines && memory == MemoryKind::host) add_raw_exchange(name, comm, options, shape, extended.get(), variants);
      continue;
    }
    HaloStrategy strategy = name == "p2p"            ? HaloStrategy::p2p
                            : name == "mpi_neighbor" ? HaloStrategy::mpi_neighbor
                            : name == "rma"          ? HaloStrategy::rma
                                                     : HaloStrategy::neighbor_alltoallv;
    if (strategy == HaloStrategy::mpi_neighbor && (comm.backend() != BackendKind::mpi || memory != MemoryKind::host)) {
      continue;
    }
    if (strategy == HaloStrategy::rma && (comm.backend() != BackendKind::ucx || memory != MemoryKind::host)) continue;
    auto plan = std::make_shared<HaloPlan>(HaloPlan::create(
        comm, {.shard_rows = shard_rows, .left = static_cast<std::int64_t>(left),
               .right = static_cast<std::int64_t>(right), .row_elements = options.channels, .type = type,
               .strategy = strategy, .memory = memory}));
    keep.push_back(plan);
    auto* data = extended.get();
    const bool touch = options.touch && memory == MemoryKind::host;
    variants.push_back({name + suffix, "forward", plan->bytes_sent(),
                        [plan = plan.get(), data, stream, touch, left = left, own = own, right = right,
                         row_bytes = row_bytes] {
                          plan->start(data, stream).wait();
                          if (touch) read_halo(data, left, own, right, row_bytes);
                        }});
    variants.push_back({name + suffix, "adjoint", plan->bytes_sent(),
                        [plan = plan.get(), data, stream] { plan->start_adjoint(data, stream).wait(); }, plan});
  }
}

/// Measures every chosen strategy at one sequence length, on each of `comms` (the same ranks).
std::vector<Result> measure(const std::vector<Communicator*>& comms, const HaloOptions& options, std::size_t seq,
                            DataType type) {
  auto& comm = *comms.front();
  const int size = comm.size();
  Case shape;
  for (int r = 0; r < size; ++r) {
    shape.shard_rows.push_back(seq / size + (static_cast<std::size_t>(r) < seq % size ? 1 : 0));
  }
  shape.own = shape.shard_rows[comm.rank()];
  shape.left = options.causal ? options.window - 1 : options.window;
  shape.right = options.causal ? 0 : options.window;
  shape.row_bytes = options.channels * size_of(type);
  shape.type = type;
  const MemoryKind memory = options.memory;
  shape.sequence = filled_buffer(shape.own * shape.row_bytes, std::byte{2}, memory);
  shape.heads = filled_buffer(seq * shape.row_bytes / size + shape.row_bytes, std::byte{3}, memory);
  const auto stream_owner = memory == MemoryKind::cuda ? verifiable::new_stream() : nullptr;
  shape.stream = StreamRef(stream_owner.get());

  std::vector<Variant> variants;
  std::vector<std::shared_ptr<void>> keep;  // plans and buffers, until the timing ends
  for (std::size_t c = 0; c < comms.size(); ++c) {
    const auto suffix = comms.size() > 1 ? fmt::format("@{}", to_string(comms[c]->backend())) : std::string();
    add_variants(*comms[c], options, shape, suffix, c == 0, variants, keep);
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
    // rma picks its path per start: say which one the timed starts took.
    const auto& plan = variants[v].plan;
    if (plan && plan->strategy() == HaloStrategy::rma && comm.rank() == 0) {
      fmt::print("# seq {}, {}: {}\n", seq, variants[v].strategy, plan->describe());
    }
  }
  return results;
}

/// Per (direction, seq): the time of `strategy`, to compare every row with.
std::map<std::string, double> times_of(const std::vector<Result>& results, const std::string& strategy) {
  std::map<std::string, double> times;
  for (const auto& r : results) {
    if (r.strategy == strategy) times[r.direction + std::to_string(r.seq)] = r.time_us;
  }
  return times;
}

/// How many times faster `r` is than the reference time for its direction and length; 0 without one.
double speedup_over(std::map<std::string, double>& reference, const Result& r) {
  const double time = reference[r.direction + std::to_string(r.seq)];
  return time > 0 && r.time_us > 0 ? time / r.time_us : 0.0;
}

void print_table(const std::vector<Result>& results) {
  auto heads = times_of(results, "heads_alltoall");
  auto raw = times_of(results, kRawExchange);
  auto floor = times_of(results, kCopyFloor);
  fmt::print("# {:>8} {:>20} {:>9} {:>14} {:>12} {:>10} {:>14} {:>16} {:>15}\n", "seq", "strategy", "direction",
             "bytes/rank", "time (us)", "GB/s", "vs heads_a2a", "vs isend_irecv", "vs copy_floor");
  auto ratio = [](double speedup, const char* format) {
    return speedup > 0 ? fmt::format(fmt::runtime(format), speedup) : std::string("-");
  };
  for (const auto& r : results) {
    fmt::print("  {:>8} {:>20} {:>9} {:>14} {:>12.1f} {:>10.2f} {:>14} {:>16} {:>15}\n", r.seq, r.strategy,
               r.direction, r.bytes, r.time_us,
               r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e3) : 0.0,
               ratio(speedup_over(heads, r), "{:.1f}x"), ratio(speedup_over(raw, r), "{:.2f}x"),
               ratio(speedup_over(floor, r), "{:.2f}x"));
  }
}

/// Measures, prints (rank 0) and writes the records and plot for `comm`'s ranks.
void run_on(const std::vector<Communicator*>& comms, const HaloOptions& options, DataType type) {
  auto& comm = *comms.front();
  std::vector<std::string_view> backends;
  for (auto* each : comms) backends.push_back(to_string(each->backend()));
  if (comm.rank() == 0) {
    fmt::print("# meshcomm halo_perf: {} ranks{}, {} backend, seq {}, window {} ({}), channels {} ({} heads), {}, {} "
               "memory{}{}, iters {} x {} repeats (median), time = max over ranks\n",
               comm.size(), options.threads > 0 ? " (threads)" : "", fmt::join(backends, " and "), options.seq,
               options.window, options.causal ? "causal: W-1 rows left" : "each side",
               options.channels, options.heads, options.dtype, to_string(options.memory),
               options.shared_buffers ? " (allocate_shared)" : "", options.touch ? ", halo rows read after each" : "",
               options.iterations, options.repeats);
  }
  std::vector<Result> results = measure(comms, options, options.seq, type);
  if (comm.rank() == 0) print_table(results);
  std::vector<Result> sweep;
  if (!options.plot_path.empty()) {
    for (std::size_t seq = options.seq / 8; seq < options.seq; seq *= 2) {
      if (seq / comm.size() < 2 * options.window + 1) continue;
      auto more = measure(comms, options, seq, type);
      sweep.insert(sweep.end(), more.begin(), more.end());
    }
    sweep.insert(sweep.end(), results.begin(), results.end());
  }
  if (comm.rank() == 0) {
    const auto& all = sweep.empty() ? results : sweep;
    if (!options.json_path.empty()) {
      auto heads = times_of(all, "heads_alltoall");
      auto raw = times_of(all, kRawExchange);
      auto floor = times_of(all, kCopyFloor);
      nlohmann::json records = nlohmann::json::array();
      for (const auto& r : all) {
        records.push_back({{"strategy", r.strategy}, {"direction", r.direction}, {"ranks", comm.size()},
                           {"seq", r.seq}, {"window", options.window}, {"causal", options.causal},
                           {"channels", options.channels}, {"dtype", options.dtype},
                           {"memory", std::string(to_string(options.memory))},
                           {"backends", fmt::format("{}", fmt::join(backends, ","))},
                           {"buffers", options.shared_buffers ? "shared" : "user"}, {"bytes_per_rank", r.bytes},
                           {"time_us", r.time_us}, {"speedup_vs_heads", speedup_over(heads, r)},
                           {"speedup_vs_isend_irecv", speedup_over(raw, r)},
                           {"speedup_vs_copy_floor", speedup_over(floor, r)}});
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
  CommandLine command_line{"halo_perf: halo exchange strategies vs the head-sharding all-to-all (run it with mpirun)"};
  command_line.option("--seq", options.seq, "sequence rows S").show_default();
  command_line.option("--window", options.window, "window: w rows each side, or W with --causal (W-1 on the left)")
      .show_default();
  command_line.option("--channels", options.channels, "elements per row C (= heads x head_dim)").show_default();
  command_line.option("--heads", options.heads, "heads, for heads_alltoall (divisible by the ranks)").show_default();
  command_line.option("--dtype", options.dtype, "f32 or bf16").show_default().one_of({"f32", "bf16"});
  command_line
      .option("--strategy", options.strategy,
              "all, p2p, neighbor_alltoall, mpi_neighbor (mpi backend), rma (ucx backend), mpi_sendrecv, "
              "copy_floor or heads_alltoall")
      .show_default();
  command_line.flag("--causal", options.causal, "causal window (left halo only)");
  command_line.flag("--touch", options.touch,
                    "each forward exchange ends with its rank reading its halo rows (as attention does next)");
  command_line.flag("--quick", options.quick, "scale the default case down (S 4032, C 256, w 64)");
  command_line.option("-n,--iters", options.iterations, "timed exchanges per repeat").show_default();
  command_line.option("-w,--warmup", options.warmup, "untimed exchanges first").show_default();
  command_line.option("--repeat", options.repeats, "timed runs; the median is reported").show_default();
  command_line.option("--json", options.json_path, "write the records to this file");
  command_line.option("--plot", options.plot_path, "draw time against sequence length per strategy (PNG or .svg)");
  std::string memory = "host";
  command_line
      .option("--memory", memory,
              "host, or cuda: device buffers (ranks as threads on one GPU with --threads; the "
              "mpi_* baselines need host memory)")
      .show_default()
      .one_of({"host", "cuda"});
  command_line.option("-t,--threads", options.threads, "ranks as threads of this process (run without mpirun)")
      .range(1, 64);
  add_process_backend_option(command_line, options.backend, true);
  std::string buffers = "user";
  command_line
      .option("--buffers", buffers,
              "user: plain memory; shared: allocate_shared (on ucx, mapped memory the rma puts land in)")
      .show_default()
      .one_of({"user", "shared"});
  if (auto exit_code = command_line.parse(argc, argv, world_rank == 0)) return *exit_code;
  options.memory = memory == "cuda" ? MemoryKind::cuda : MemoryKind::host;
  options.shared_buffers = buffers == "shared";
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
      run_as_threads(options.threads, [&](Communicator& comm) { run_on({&comm}, options, type); });
    } else {
      MpiBootstrap bootstrap;
      std::vector<Communicator> comms;
      for (auto backend : process_backends(options.backend)) {
        comms.push_back(Communicator::create(bootstrap, {.backend = backend}));
      }
      std::vector<Communicator*> pointers;
      for (auto& each : comms) pointers.push_back(&each);
      run_on(pointers, options, type);
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
