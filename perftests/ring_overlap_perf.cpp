// ring_overlap_perf: does a RingPipeline transfer on the GPU hide behind the compute beside it?
// Ranks are threads sharing one GPU (inproc); each step every rank runs a bf16 GEMM on its
// compute stream while the ring moves the next block, by each transfer path in turn.
//
//   build/perftests/ring_overlap_perf [--ranks 2] [--block-mib 32] [--gemm 8192] [--repeat 5]
//                                     [--reserve-sms 16]
//
// cuBLAS's persistent GEMMs hold every SM until they end, so a copy kernel beside one waits;
// --reserve-sms leaves that many SMs to it (as comm-overlap GEMMs in TransformerEngine do), for
// every measurement alike.
//
// As ring_perf defines them, per step (one ring round's total / P, the median over repeats, the
// slowest rank): t_compute, P GEMMs alone; t_transfer, the P-1 transfers alone; t_step, both
// overlapped; overlap efficiency = (t_compute + t_transfer - t_step) / min(t_compute, t_transfer).

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/side_by_side.hpp"
#include "engine/thread_ranks.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}
void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(status)));
}

struct Options {
  int ranks = 2;
  std::size_t block_mib = 32;
  int gemm = 8192;
  int repeat = 5;
  int reserve_sms = 0;
  std::vector<std::string> transfers{"sm_copy", "copy_engine", "messages"};
  std::string json_path;
};

meshcomm::RingTransfer parse_transfer(const std::string& name) {
  for (auto transfer : {meshcomm::RingTransfer::sm_copy, meshcomm::RingTransfer::copy_engine,
                        meshcomm::RingTransfer::messages}) {
    if (meshcomm::to_string(transfer) == name) return transfer;
  }
  throw std::invalid_argument(fmt::format("--transfer '{}': valid paths are sm_copy, copy_engine, messages", name));
}

/// One rank's part: its GEMM operands, stream and cuBLAS handle.
class RankBench {
 public:
  RankBench(meshcomm::Communicator& comm, const Options& options) : comm_(comm), options_(options) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas_), "cublasCreate");
    check(cublasSetStream(blas_, stream_), "cublasSetStream");
    if (options.reserve_sms > 0) {
      int device = 0;
      int sms = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
      check(cublasSetSmCountTarget(blas_, std::max(1, sms - options.reserve_sms)), "cublasSetSmCountTarget");
    }
    const std::size_t elements = static_cast<std::size_t>(options.gemm) * options.gemm;
    for (auto*& matrix : matrices_) {
      check(cudaMalloc(&matrix, elements * 2), "cudaMalloc");
      check(cudaMemsetAsync(matrix, 0x3c, elements * 2, stream_), "cudaMemset");  // bf16 ~0.01
    }
  }
  ~RankBench() {
    for (auto* matrix : matrices_) (void)cudaFree(matrix);
    (void)cublasDestroy(blas_);
    (void)cudaStreamDestroy(stream_);
  }

  /// Per-step microseconds of compute alone, transfer alone and both, the slowest rank's.
  std::array<double, 3> measure(meshcomm::RingTransfer transfer) {
    auto ring = meshcomm::RingPipeline::create(comm_, {.block_bytes = options_.block_mib << 20,
                                                       .memory = meshcomm::MemoryKind::cuda, .transfer = transfer});
    const int steps = comm_.size();
    auto compute_alone = [&] {
      for (int step = 0; step < steps; ++step) gemm();
    };
    auto transfer_alone = [&] {
      for (int step = 0; step + 1 < steps; ++step) {
        works_.push_back(ring.start(meshcomm::stream_ref(stream_)));
        ring.advance(meshcomm::stream_ref(stream_));
      }
    };
    auto overlapped = [&] {
      for (int step = 0; step < steps; ++step) {
        const bool more = step + 1 < steps;
        if (more) works_.push_back(ring.start(meshcomm::stream_ref(stream_)));
        gemm();
        if (more) ring.advance(meshcomm::stream_ref(stream_));
      }
    };
    // The three in turn within every round, so that drift (two ranks' GEMMs share the GPU) hits
    // all of them alike.
    const std::function<void()> variants[3] = {compute_alone, transfer_alone, overlapped};
    std::vector<double> times[3];
    for (const auto& variant : variants) time(variant);  // warm-up
    for (int r = 0; r < options_.repeat; ++r) {
      for (int v = 0; v < 3; ++v) times[v].push_back(time(variants[v]));
    }
    std::array<double, 3> result{};
    for (int v = 0; v < 3; ++v) {
      std::sort(times[v].begin(), times[v].end());
      result[v] = meshcomm::perf::reduce_over_ranks(comm_, times[v][times[v].size() / 2] / steps,
                                                   meshcomm::ReduceOp::max);
    }
    return result;
  }

 private:
  void gemm() {
    const float one = 1.0F;
    const float zero = 0.0F;
    const int n = options_.gemm;
    check(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, matrices_[0], CUDA_R_16BF, n, matrices_[1],
                       CUDA_R_16BF, n, &zero, matrices_[2], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

  /// Microseconds of `run`, all ranks starting together, until this rank's stream is done.
  double time(const std::function<void()>& run) {
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    comm_.barrier();
    const auto started = Clock::now();
    run();
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - started).count();
    for (auto& work : works_) work.wait();
    works_.clear();
    return us;
  }

  meshcomm::Communicator& comm_;
  const Options& options_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  void* matrices_[3] = {nullptr, nullptr, nullptr};
  std::vector<meshcomm::Work> works_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  meshcomm::perf::CommandLine command_line{"RingPipeline transfer/compute overlap on one GPU, ranks as threads"};
  command_line.option("--ranks", options.ranks, "ranks (threads sharing the GPU)").show_default().range(1, 8);
  command_line.option("--block-mib", options.block_mib, "block size in MiB").show_default().range(1, 4096);
  command_line.option("--gemm", options.gemm, "the compute: an N x N x N bf16 GEMM per step")
      .show_default()
      .range(64, 32768);
  command_line.option("--repeat", options.repeat, "timed rounds; the median is reported").show_default().range(1, 100);
  command_line.option("--reserve-sms", options.reserve_sms, "SMs the GEMM leaves free (for sm_copy)")
      .show_default()
      .range(0, 1024);
  command_line.option("--transfer", options.transfers, "transfer paths: sm_copy copy_engine messages").split_at(',');
  command_line.option("--json", options.json_path, "write one record per transfer path to this file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  try {
    std::vector<meshcomm::RingTransfer> transfers;
    for (const auto& name : options.transfers) transfers.push_back(parse_transfer(name));
    nlohmann::json records = nlohmann::json::array();
    meshcomm::perf::run_as_threads(options.ranks, [&](meshcomm::Communicator& comm) {
      RankBench bench(comm, options);
      if (comm.rank() == 0) {
        fmt::print("# ring_overlap_perf: {} ranks on one GPU, block {} MiB, bf16 GEMM {}^3 per step ({} SMs "
                   "reserved), median of {}\n",
                   options.ranks, options.block_mib, options.gemm, options.reserve_sms, options.repeat);
        fmt::print("# {:>12} {:>14} {:>15} {:>11} {:>11} {:>14}\n", "transfer", "t_compute (us)", "t_transfer (us)",
                   "t_step (us)", "efficiency", "transfer GB/s");
      }
      for (auto transfer : transfers) {
        const auto [compute, moved, step] = bench.measure(transfer);
        if (comm.rank() != 0) continue;
        const double efficiency = (compute + moved - step) / std::min(compute, moved);
        const int steps = options.ranks;
        // A ring round moves P-1 blocks per rank: per-step transfer time covers (P-1)/P of one.
        const double gbps =
            moved > 0 ? static_cast<double>(options.block_mib << 20) * (steps - 1) / steps / (moved * 1e3) : 0.0;
        fmt::print("  {:>12} {:>14.1f} {:>15.1f} {:>11.1f} {:>11.2f} {:>14.1f}\n", meshcomm::to_string(transfer),
                   compute, moved, step, efficiency, gbps);
        records.push_back({{"transfer", meshcomm::to_string(transfer)}, {"ranks", options.ranks},
                           {"block_bytes", options.block_mib << 20}, {"gemm", options.gemm},
                           {"reserved_sms", options.reserve_sms}, {"t_compute_us", compute},
                           {"t_transfer_us", moved}, {"t_step_us", step}, {"overlap_efficiency", efficiency},
                           {"transfer_gbps", gbps}});
      }
    });
    if (!options.json_path.empty()) std::ofstream(options.json_path) << records.dump(2) << "\n";
  } catch (const std::exception& error) {
    fmt::print(stderr, "ring_overlap_perf: {}\n", error.what());
    return 1;
  }
  return 0;
}
