// ring_perf: RingAttention's pipeline — does the transfer of the next K/V block hide behind the
// attention of the current one, and how evenly is causal work spread?
//
//   mpirun -np 2 build/perftests/ring_perf --causal --layout zigzag
//   mpirun -np 4 --oversubscribe build/perftests/ring_perf --causal --layout contiguous,zigzag
//   build/perftests/ring_perf --memory cuda --threads 2 --seq 16384 --causal --transfer copy_engine
//
// On the GPU (--memory cuda) the ring is DeviceRingAttention: cuBLAS block attention on a stream
// while the RingPipeline moves K and V by copy engines or a copy kernel; blocks a causal mask
// hides are skipped; times come from CUDA events on the compute stream. --threads N runs N ranks
// as threads of one process on one GPU (one CUDA context, so their kernels and copies can run at
// once); under mpirun each process is a rank, and processes sharing a GPU take turns on it.
//
// Per run (times per step = one iteration's total / P, median over repeats, max over ranks):
// t_compute, the P block attentions alone; t_transfer, the P-1 ring transfers alone; t_step, the
// ring forward with both overlapped; overlap efficiency = (t_compute + t_transfer - t_step) /
// min(t_compute, t_transfer) (1: the shorter one fully hidden, 0: none, < 0: worse than in turn);
// t_wait, the time the ring waited after a step's compute for the next block (the transfer, and a
// slower peer's compute); imbalance = max / mean over ranks of the
// compute time, and of the visible query-key pairs.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "attention/block_attention.hpp"
#include "device/device_ring_attention.hpp"
#include "attention/ring_attention.hpp"
#include "attention/sequence_layout.hpp"
#include "engine/command_line.hpp"
#include "engine/process_backend.hpp"
#include "engine/side_by_side.hpp"
#include "engine/thread_ranks.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "meshcomm/ring_pipeline.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct RingOptions {
  std::size_t seq = 1024;
  std::size_t heads = 8;
  std::size_t head_dim = 64;
  bool causal = false;
  std::string layouts = "zigzag";
  int iterations = 3;
  int warmup = 1;
  int repeats = 3;
  std::string json_path;
  MemoryKind memory = MemoryKind::host;
  RingTransfer transfer = RingTransfer::automatic;
  int threads = 0;  ///< ranks as threads of this process (0: the mpirun processes)
  int reserve_sms = 0;
  std::string backend = "mpi";  ///< of the mpirun processes
};

/// What one layout's run measured on this rank, in seconds per ring round.
struct RoundTimes {
  double compute = 0;     ///< the P block attentions alone (median, slowest rank)
  double transfer = 0;    ///< the P - 1 transfers alone
  double overlapped = 0;  ///< the ring with both
  double my_compute = 0;  ///< this rank's compute alone, for the imbalance
  double my_wait = 0;     ///< this rank's wait for blocks inside the ring, per round (host rings)
  std::size_t block_bytes = 0;
};

/// Normal random values, the same for a rank every run.
std::vector<float> random_values(std::size_t count, std::mt19937& random) {
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> values(count);
  for (auto& value : values) value = normal(random);
  return values;
}

/// The host ring (fp32 on the CPU) over `comm`'s backend.
RoundTimes measure_host(Communicator& comm, const RingOptions& options,
                        const std::vector<std::vector<std::int64_t>>& block_positions) {
  const int size = comm.size();
  const std::size_t row = options.heads * options.head_dim;
  const auto& positions = block_positions[comm.rank()];
  const std::size_t rows = positions.size();
  std::mt19937 random(static_cast<unsigned>(comm.rank()));
  auto q = random_values(rows * row, random), k = random_values(rows * row, random);
  auto v = random_values(rows * row, random);
  std::vector<float> out(rows * row), lse(rows * options.heads);
  const layers::RingAttentionShape shape{rows, options.heads, options.head_dim, options.causal};
  const layers::BlockShape block{rows, rows, options.heads, options.head_dim, options.causal};
  RoundTimes times;
  // Compute alone: this rank's queries against every rank's block, as the ring would bring them.
  auto compute_alone = [&] {
    const auto started = Clock::now();
    std::fill(lse.begin(), lse.end(), -std::numeric_limits<float>::infinity());
    for (int r = 0; r < size; ++r) {
      layers::block_attention_forward(q.data(), positions.data(), k.data(), v.data(), block_positions[r].data(),
                                      out.data(), lse.data(), block);
    }
    times.my_compute = std::chrono::duration<double>(Clock::now() - started).count();
  };
  // Transfer alone: the P-1 steps of the same pipeline, nothing to hide them behind.
  times.block_bytes = rows * sizeof(std::int64_t) + 2 * rows * row * sizeof(float);
  auto pipeline = RingPipeline::create(comm, {.block_bytes = times.block_bytes});
  auto transfer_alone = [&] {
    for (int step = 0; step + 1 < size; ++step) {
      pipeline.start().wait();
      pipeline.advance();
    }
  };
  // Both, overlapped: the real ring forward.
  layers::RingAttentionTimes ring_times;
  int ring_runs = 0;
  layers::RingAttention<float> ring(comm, shape);
  auto overlapped_ring = [&] {
    ring.forward(q.data(), k.data(), v.data(), positions.data(), out.data(), lse.data(), &ring_times);
    ++ring_runs;
  };
  const auto medians = time_side_by_side(comm, {options.iterations, options.warmup, options.repeats},
                                         {compute_alone, transfer_alone, overlapped_ring});
  times.compute = medians[0];
  times.transfer = medians[1];
  times.overlapped = medians[2];
  times.my_wait = ring_times.wait_seconds / std::max(1, ring_runs);
  return times;
}

/// DeviceRingAttention on CUDA memory, timed by CUDA events on the compute stream.
RoundTimes measure_device(Communicator& comm, const RingOptions& options,
                          const std::vector<std::vector<std::int64_t>>& block_positions) {
  const std::size_t row = options.heads * options.head_dim;
  const auto& positions = block_positions[comm.rank()];
  const std::size_t rows = positions.size();
  const std::size_t bytes = rows * row * sizeof(float);
  std::mt19937 random(static_cast<unsigned>(comm.rank()));
  const auto stream = verifiable::new_stream();
  auto upload = [&](const std::vector<float>& host) {
    auto device = verifiable::device_bytes(host.size() * sizeof(float));
    verifiable::copy_to_device(device.get(), host.data(), host.size() * sizeof(float));
    return device;
  };
  auto q = upload(random_values(rows * row, random)), k = upload(random_values(rows * row, random));
  auto v = upload(random_values(rows * row, random));
  auto out = verifiable::device_bytes(bytes), lse = verifiable::device_bytes(rows * options.heads * sizeof(float));
  auto f = [](const std::shared_ptr<std::byte>& device) { return reinterpret_cast<float*>(device.get()); };
  layers::DeviceRingAttention ring(comm, {rows, options.heads, options.head_dim, options.causal}, positions,
                                   {.stream = StreamRef(stream.get()), .transfer = options.transfer,
                                    .reserve_sms = options.reserve_sms});
  RoundTimes times;
  times.block_bytes = ring.block_bytes();
  // Everything a body queues ends on the compute stream (the ring's copies are ordered into it),
  // so CUDA events on that stream time it.
  auto* queue = stream.get();
  auto compute_alone = [&] { ring.forward_compute_alone(f(q), f(k), f(v), f(out), f(lse)); };
  auto transfer_alone = [&] { ring.forward_transfers_alone(); };
  auto overlapped_ring = [&] { ring.forward(f(q), f(k), f(v), f(out), f(lse)); };
  const auto medians =
      time_side_by_side(comm, {options.iterations, options.warmup, options.repeats},
                        {compute_alone, transfer_alone, overlapped_ring},
                        [queue](const std::function<void()>& run) {
                          return verifiable::stream_milliseconds(queue, run) / 1e3;
                        });
  // This rank's own compute time, for the imbalance: the ranks measure at once, as above.
  comm.barrier();
  times.my_compute = verifiable::stream_milliseconds(queue, [&] {
                       for (int i = 0; i < options.iterations; ++i) compute_alone();
                     }) /
                     1e3 / options.iterations;
  times.compute = medians[0];
  times.transfer = medians[1];
  times.overlapped = medians[2];
  return times;
}

nlohmann::json measure(Communicator& comm, const RingOptions& options, layers::SequenceLayout layout) {
  const int size = comm.size();
  std::vector<std::vector<std::int64_t>> block_positions;
  for (int r = 0; r < size; ++r) block_positions.push_back(layers::layout_positions(layout, options.seq, size, r));
  const auto& positions = block_positions[comm.rank()];
  const RoundTimes times = options.memory == MemoryKind::cuda ? measure_device(comm, options, block_positions)
                                                              : measure_host(comm, options, block_positions);
  // Work per rank: visible query-key pairs, and the measured compute time.
  double pairs = 0;
  for (int r = 0; r < size; ++r) {
    for (auto query : positions) {
      for (auto key : block_positions[r]) pairs += (!options.causal || key <= query) ? 1 : 0;
    }
  }
  const double imbalance_time = reduce_over_ranks(comm, times.my_compute, ReduceOp::max) /
                                (reduce_over_ranks(comm, times.my_compute, ReduceOp::sum) / size);
  const double imbalance_work =
      reduce_over_ranks(comm, pairs, ReduceOp::max) / (reduce_over_ranks(comm, pairs, ReduceOp::sum) / size);
  const double t_compute = times.compute / size * 1e6;
  const double t_transfer = times.transfer / size * 1e6;
  const double t_step = times.overlapped / size * 1e6;
  const double efficiency = (t_compute + t_transfer - t_step) / std::max(1e-9, std::min(t_compute, t_transfer));
  // Time the ring waited after each step's compute: for the transfer and for slower peers.
  const double t_wait = reduce_over_ranks(comm, times.my_wait, ReduceOp::max) / size * 1e6;
  return {{"layout", std::string(to_string(layout))}, {"causal", options.causal}, {"ranks", size},
          {"seq", options.seq}, {"heads", options.heads}, {"head_dim", options.head_dim},
          {"memory", std::string(to_string(options.memory))}, {"transfer", std::string(to_string(options.transfer))},
          {"reserved_sms", options.reserve_sms},
          {"block_bytes", times.block_bytes}, {"t_compute_us", t_compute}, {"t_transfer_us", t_transfer},
          {"t_step_us", t_step}, {"t_wait_us", t_wait}, {"overlap_efficiency", efficiency},
          {"step_vs_sum", t_step / (t_compute + t_transfer)}, {"imbalance", imbalance_time},
          {"work_imbalance", imbalance_work}};
}

/// Every layout in turn on `comm`; rank 0 prints the table. Returns the records.
nlohmann::json run_layouts(Communicator& comm, const RingOptions& options) {
  nlohmann::json records = nlohmann::json::array();
  if (comm.rank() == 0) {
    fmt::print("# meshcomm ring_perf: {} ranks{}, seq {}, {} heads x {}, {}, {} memory{}, times per step (us, max "
               "over ranks, median of {})\n",
               comm.size(), options.threads > 0 ? " (threads)" : "", options.seq, options.heads, options.head_dim,
               options.causal ? "causal" : "full", to_string(options.memory),
               options.memory == MemoryKind::cuda
                   ? fmt::format(", transfer {}, {} SMs reserved", to_string(options.transfer), options.reserve_sms)
                   : "",
               options.repeats);
    fmt::print("# {:>10} {:>10} {:>12} {:>10} {:>10} {:>8} {:>10} {:>9} {:>10} {:>10}\n", "layout", "block (B)",
               "t_compute", "t_transfer", "t_step", "t_wait", "overlap", "step/sum", "imbalance", "work imb.");
  }
  for (const auto name : split_axis_list(options.layouts)) {
    const auto record = measure(comm, options, name == "zigzag" ? layers::SequenceLayout::zigzag
                                                                : layers::SequenceLayout::contiguous);
    records.push_back(record);
    if (comm.rank() == 0) {
      fmt::print("  {:>10} {:>10} {:>12.1f} {:>10.1f} {:>10.1f} {:>8.1f} {:>10.2f} {:>9.3f} {:>10.2f} {:>10.2f}\n",
                 record["layout"].get<std::string>(), record["block_bytes"].get<std::size_t>(),
                 record["t_compute_us"].get<double>(), record["t_transfer_us"].get<double>(),
                 record["t_step_us"].get<double>(), record["t_wait_us"].get<double>(),
                 record["overlap_efficiency"].get<double>(), record["step_vs_sum"].get<double>(),
                 record["imbalance"].get<double>(), record["work_imbalance"].get<double>());
    }
  }
  return records;
}

int run(int argc, char** argv) {
  MpiSession session(argc, argv);
  int world_rank = 0;
  int world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  RingOptions options;
  CommandLine command_line{
      "ring_perf: RingAttention's transfer/compute overlap and causal balance (run it with mpirun)"};
  command_line.option("--seq", options.seq, "sequence rows").show_default();
  command_line.option("--heads", options.heads, "heads").show_default();
  command_line.option("--head-dim", options.head_dim, "elements per head").show_default();
  command_line.flag("--causal", options.causal, "causal attention");
  command_line.option("--layout", options.layouts, "contiguous, zigzag, or both comma-separated").show_default();
  command_line.option("-n,--iters", options.iterations, "timed iterations per repeat").show_default();
  command_line.option("-w,--warmup", options.warmup, "untimed iterations first").show_default();
  command_line.option("--repeat", options.repeats, "timed runs; the median is reported").show_default();
  command_line.option("--json", options.json_path, "write the records to this file");
  std::string memory = "host";
  command_line.option("--memory", memory, "host (the CPU ring) or cuda (the GPU ring on device buffers)")
      .show_default()
      .one_of({"host", "cuda"});
  const std::map<std::string, RingTransfer> transfers{{"automatic", RingTransfer::automatic},
                                                      {"messages", RingTransfer::messages},
                                                      {"sm_copy", RingTransfer::sm_copy},
                                                      {"copy_engine", RingTransfer::copy_engine}};
  std::string transfer = "automatic";
  command_line
      .option("--transfer", transfer,
              "how blocks move with --memory cuda: automatic, messages, sm_copy, "
              "copy_engine")
      .show_default()
      .one_of({"automatic", "messages", "sm_copy", "copy_engine"});
  command_line
      .option("--reserve-sms", options.reserve_sms,
              "with --memory cuda: SMs the attention's GEMMs leave free "
              "(for --transfer sm_copy)")
      .show_default()
      .range(0, 1024);
  add_process_backend_option(command_line, options.backend);
  command_line.option("-t,--threads", options.threads, "ranks as threads of this process (run without mpirun)")
      .range(1, 64);
  if (auto exit_code = command_line.parse(argc, argv, world_rank == 0)) return *exit_code;
  options.memory = memory == "cuda" ? MemoryKind::cuda : MemoryKind::host;
  options.transfer = transfers.at(transfer);
  try {
    for (const auto name : split_axis_list(options.layouts)) {
      if (name != "contiguous" && name != "zigzag") {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--layout {} is unknown; valid: contiguous, zigzag", name));
      }
    }
    if (options.threads > 0 && world_size > 1) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--threads {} runs the ranks inside one process, but mpirun started {}; use one or "
                              "the other",
                              options.threads, world_size));
    }
    nlohmann::json records;
    if (options.threads > 0) {
      run_as_threads(options.threads, [&](Communicator& comm) {
        auto mine = run_layouts(comm, options);
        if (comm.rank() == 0) records = std::move(mine);
      });
    } else {
      MpiBootstrap bootstrap;
      auto comm = Communicator::create(bootstrap, {.backend = process_backend(options.backend)});
      records = run_layouts(comm, options);
    }
    if (world_rank == 0 && !options.json_path.empty()) {
      std::ofstream(options.json_path) << records.dump(2) << "\n";
      fmt::print("# JSON records: {}\n", options.json_path);
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "ring_perf: rank {}: {}\n", world_rank, error.what());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run(argc, argv); }
