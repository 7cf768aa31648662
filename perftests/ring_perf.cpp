// ring_perf: RingAttention's pipeline — does the transfer of the next K/V block hide behind the
// attention of the current one, and how evenly is causal work spread?
//
//   mpirun -np 2 build/perftests/ring_perf --causal --layout zigzag
//   mpirun -np 4 --oversubscribe build/perftests/ring_perf --causal --layout contiguous,zigzag
//
// Per run (times per step = one iteration's total / P, median over repeats, max over ranks):
// t_compute, the P block attentions alone; t_transfer, the P-1 ring transfers alone; t_step, the
// ring forward with both overlapped; overlap efficiency = (t_compute + t_transfer - t_step) /
// min(t_compute, t_transfer) (1: the shorter one fully hidden, 0: none, < 0: worse than in turn);
// t_wait, the time the ring waited after a step's compute for the next block (the transfer, and a
// slower peer's compute); imbalance = max / mean over ranks of the
// compute time, and of the visible query-key pairs.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "attention/block_attention.hpp"
#include "attention/ring_attention.hpp"
#include "attention/sequence_layout.hpp"
#include "engine/side_by_side.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "meshcomm/ring_pipeline.hpp"

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
};

nlohmann::json measure(Communicator& comm, const RingOptions& options, layers::SequenceLayout layout) {
  const int size = comm.size();
  const std::size_t row = options.heads * options.head_dim;
  const auto positions = layers::layout_positions(layout, options.seq, size, comm.rank());
  const std::size_t rows = positions.size();
  std::mt19937 random(static_cast<unsigned>(comm.rank()));
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> q(rows * row), k(rows * row), v(rows * row), out(rows * row), lse(rows * options.heads);
  for (auto* tensor : {&q, &k, &v}) {
    for (auto& value : *tensor) value = normal(random);
  }
  const layers::RingAttentionShape shape{rows, options.heads, options.head_dim, options.causal};
  const layers::BlockShape block{rows, rows, options.heads, options.head_dim, options.causal};

  // Compute alone: this rank's queries against every rank's block, as the ring would bring them.
  std::vector<std::vector<std::int64_t>> block_positions;
  for (int r = 0; r < size; ++r) block_positions.push_back(layers::layout_positions(layout, options.seq, size, r));
  double my_compute = 0;
  auto compute_alone = [&] {
    const auto started = Clock::now();
    std::fill(lse.begin(), lse.end(), -std::numeric_limits<float>::infinity());
    for (int r = 0; r < size; ++r) {
      layers::block_attention_forward(q.data(), positions.data(), k.data(), v.data(), block_positions[r].data(),
                                      out.data(), lse.data(), block);
    }
    my_compute = std::chrono::duration<double>(Clock::now() - started).count();
  };
  // Transfer alone: the P-1 steps of the same pipeline, nothing to hide them behind.
  const std::size_t block_bytes = rows * sizeof(std::int64_t) + 2 * rows * row * sizeof(float);
  auto pipeline = RingPipeline::create(comm, {.block_bytes = block_bytes});
  auto transfer_alone = [&] {
    for (int step = 0; step + 1 < size; ++step) {
      pipeline.start().wait();
      pipeline.advance();
    }
  };
  // Both, overlapped: the real ring forward.
  layers::RingAttentionTimes ring_times;
  int ring_runs = 0;
  auto overlapped_ring = [&] {
    layers::ring_attention_forward(comm, q.data(), k.data(), v.data(), positions.data(), out.data(), lse.data(), shape,
                                   &ring_times);
    ++ring_runs;
  };
  const auto medians = time_side_by_side(comm, {options.iterations, options.warmup, options.repeats},
                                         {compute_alone, transfer_alone, overlapped_ring});
  const double compute = medians[0];
  const double transfer = medians[1];
  const double overlapped = medians[2];
  // Work per rank: visible query-key pairs, and the measured compute time.
  double pairs = 0;
  for (int r = 0; r < size; ++r) {
    for (auto query : positions) {
      for (auto key : block_positions[r]) pairs += (!options.causal || key <= query) ? 1 : 0;
    }
  }
  const double imbalance_time =
      reduce_over_ranks(comm, my_compute, ReduceOp::max) / (reduce_over_ranks(comm, my_compute, ReduceOp::sum) / size);
  const double imbalance_work =
      reduce_over_ranks(comm, pairs, ReduceOp::max) / (reduce_over_ranks(comm, pairs, ReduceOp::sum) / size);
  const double t_compute = compute / size * 1e6;
  const double t_transfer = transfer / size * 1e6;
  const double t_step = overlapped / size * 1e6;
  const double efficiency = (t_compute + t_transfer - t_step) / std::max(1e-9, std::min(t_compute, t_transfer));
  // Time the ring waited after each step's compute: for the transfer and for slower peers.
  const double t_wait =
      reduce_over_ranks(comm, ring_times.wait_seconds / std::max(1, ring_runs), ReduceOp::max) / size * 1e6;
  return {{"layout", std::string(to_string(layout))}, {"causal", options.causal}, {"ranks", size},
          {"seq", options.seq}, {"heads", options.heads}, {"head_dim", options.head_dim},
          {"block_bytes", block_bytes}, {"t_compute_us", t_compute}, {"t_transfer_us", t_transfer},
          {"t_step_us", t_step}, {"t_wait_us", t_wait}, {"overlap_efficiency", efficiency},
          {"step_vs_sum", t_step / (t_compute + t_transfer)}, {"imbalance", imbalance_time},
          {"work_imbalance", imbalance_work}};
}

int run(int argc, char** argv) {
  MpiSession session(argc, argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  RingOptions options;
  CLI::App app{"ring_perf: RingAttention's transfer/compute overlap and causal balance (run it with mpirun)"};
  app.add_option("--seq", options.seq, "sequence rows")->capture_default_str();
  app.add_option("--heads", options.heads, "heads")->capture_default_str();
  app.add_option("--head-dim", options.head_dim, "elements per head")->capture_default_str();
  app.add_flag("--causal", options.causal, "causal attention");
  app.add_option("--layout", options.layouts, "contiguous, zigzag, or both comma-separated")->capture_default_str();
  app.add_option("-n,--iters", options.iterations, "timed iterations per repeat")->capture_default_str();
  app.add_option("-w,--warmup", options.warmup, "untimed iterations first")->capture_default_str();
  app.add_option("--repeat", options.repeats, "timed runs; the median is reported")->capture_default_str();
  app.add_option("--json", options.json_path, "write the records to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return world_rank == 0 ? app.exit(error) : (error.get_exit_code() == 0 ? 0 : 2);
  }
  try {
    MpiBootstrap bootstrap;
    auto comm = Communicator::create(bootstrap);
    nlohmann::json records = nlohmann::json::array();
    if (comm.rank() == 0) {
      fmt::print("# meshcomm ring_perf: {} ranks, seq {}, {} heads x {}, {}, times per step (us, max over ranks, "
                 "median of {})\n",
                 comm.size(), options.seq, options.heads, options.head_dim, options.causal ? "causal" : "full",
                 options.repeats);
      fmt::print("# {:>10} {:>10} {:>12} {:>10} {:>10} {:>8} {:>10} {:>9} {:>10} {:>10}\n", "layout", "block (B)",
                 "t_compute", "t_transfer", "t_step", "t_wait", "overlap", "step/sum", "imbalance", "work imb.");
    }
    for (const auto name : split_axis_list(options.layouts)) {
      if (name != "contiguous" && name != "zigzag") {
        throw Error(ErrorCode::invalid_argument, fmt::format("--layout {} is unknown; valid: contiguous, zigzag", name));
      }
      const auto record = measure(comm, options, name == "zigzag" ? layers::SequenceLayout::zigzag
                                                                  : layers::SequenceLayout::contiguous);
      records.push_back(record);
      if (comm.rank() == 0) {
        fmt::print("  {:>10} {:>10} {:>12.1f} {:>10.1f} {:>10.1f} {:>8.1f} {:>10.2f} {:>9.3f} {:>10.2f} {:>10.2f}\n",
                   record["layout"].get<std::string>(), record["block_bytes"].get<std::size_t>(),
                   record["t_compute_us"].get<double>(), record["t_transfer_us"].get<double>(),
                   record["t_step_us"].get<double>(), record["t_wait_us"].get<double>(),
                   record["overlap_efficiency"].get<double>(),
                   record["step_vs_sum"].get<double>(), record["imbalance"].get<double>(),
                   record["work_imbalance"].get<double>());
      }
    }
    if (comm.rank() == 0 && !options.json_path.empty()) {
      std::ofstream(options.json_path) << records.dump(2) << "\n";
      fmt::print("# JSON records: {}\n", options.json_path);
    }
  } catch (const Error& error) {
    fmt::print(stderr, "ring_perf: rank {}: {}\n", world_rank, error.what());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run(argc, argv); }
