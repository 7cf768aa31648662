// nccl_overhead_perf: meshcomm's all-gather on the nccl backend against the raw ncclAllGather
// call, side by side in one run, from 8 bytes up.
//
//   mpirun -np 1 build/perftests/nccl_overhead_perf -b 8 -e 64M -f 8 [-n 200] [--repeat 7]
//
// Both sides queue N calls back to back on a stream of their own and time the stream with CUDA
// events, as nccl-tests does; at small sizes that is the host's cost of issuing a call. Each round
// times every variant once, in an order that rotates from round to round, so that drift and
// position hit all alike; the table gives each variant's median and the median over rounds of
// meshcomm's time over the raw call's in the same round.

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nccl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/perf_options.hpp"
#include "engine/statistics.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "verifiable/device_staging.hpp"

namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(result)));
}

using meshcomm::perf::median;

/// Microseconds per call of `calls` (which queues `iterations` calls on `stream`), by events.
double microseconds_per_call(cudaStream_t stream, int iterations, const std::function<void()>& calls) {
  return meshcomm::verifiable::stream_milliseconds(stream, calls) * 1e3 / iterations;
}

/// A raw NCCL communicator over MPI_COMM_WORLD, the baseline: blocking (NCCL's default), or
/// nonblocking as meshcomm makes its own.
ncclComm_t raw_communicator(int rank, int size, bool blocking) {
  ncclUniqueId id{};
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking ? 1 : 0;
  ncclResult_t state = ncclCommInitRankConfig(&comm, size, id, rank, &config);
  while (state == ncclInProgress) check_nccl(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
  check_nccl(state, "ncclCommInitRankConfig");
  return comm;
}

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  std::string min_bytes = "8";
  std::string max_bytes = "64M";
  double factor = 8;
  int iterations = 200;
  int warmup = 20;
  int repeats = 7;
  std::string json_path;
  meshcomm::perf::CommandLine command_line{"meshcomm's nccl all_gather against raw ncclAllGather, per call"};
  command_line.option("-b,--minbytes", min_bytes, "smallest size per rank").show_default();
  command_line.option("-e,--maxbytes", max_bytes, "largest size per rank").show_default();
  command_line.option("-f,--stepfactor", factor, "size factor per step").show_default().range(1.5, 1e6);
  command_line.option("-n,--iters", iterations, "calls per timed round").show_default().range(1, 1 << 20);
  command_line.option("-w,--warmup_iters", warmup, "untimed calls first").show_default();
  command_line.option("--repeat", repeats, "rounds per side; medians are reported").show_default().range(1, 1000);
  command_line.option("--json", json_path, "write one record per size to this file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;

  int rank = 0;
  try {
    meshcomm::MpiBootstrap bootstrap;
    rank = bootstrap.rank();
    const int size = bootstrap.size();
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check_cuda(cudaSetDevice(rank % devices), "cudaSetDevice");
    auto comm = meshcomm::Communicator::create(bootstrap, {.backend = meshcomm::BackendKind::nccl});
    ncclComm_t raw = raw_communicator(rank, size, true);
    ncclComm_t raw_nonblocking = raw_communicator(rank, size, false);
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    const std::size_t largest = meshcomm::perf::parse_size(max_bytes, "-e");
    void* input = nullptr;
    void* output = nullptr;
    check_cuda(cudaMalloc(&input, largest), "cudaMalloc");
    check_cuda(cudaMalloc(&output, largest * size), "cudaMalloc");

    if (rank == 0) {
      int version = 0;
      check_nccl(ncclGetVersion(&version), "ncclGetVersion");
      fmt::print("# nccl_overhead_perf: NCCL {}, {} ranks, all_gather of u8, {} calls per round, median of {} "
                 "rounds, CUDA events on one stream\n",
                 version, size, iterations, repeats);
      fmt::print("# {:>10} {:>12} {:>16} {:>14} {:>10}\n", "bytes/rank", "raw (us)", "raw nonblocking", "meshcomm (us)",
                 "ratio");
    }
    nlohmann::json records = nlohmann::json::array();
    for (std::size_t bytes = meshcomm::perf::parse_size(min_bytes, "-b"); bytes <= largest;
         bytes = std::max(bytes + 1, static_cast<std::size_t>(static_cast<double>(bytes) * factor))) {
      auto raw_calls = [&](ncclComm_t on, int n) {
        for (int i = 0; i < n; ++i) {
          const ncclResult_t result = ncclAllGather(input, output, bytes, ncclUint8, on, stream);
          if (result != ncclInProgress) check_nccl(result, "ncclAllGather");
        }
      };
      std::vector<meshcomm::Work> works;
      works.reserve(static_cast<std::size_t>(std::max(iterations, warmup)));  // growing it is not the call's cost
      auto meshcomm_calls = [&](int n) {
        for (int i = 0; i < n; ++i) {
          works.push_back(comm.all_gather(meshcomm::ConstBufferView(input, bytes, meshcomm::DataType::u8, meshcomm::MemoryKind::cuda),
                                          meshcomm::BufferView(output, bytes * size, meshcomm::DataType::u8, meshcomm::MemoryKind::cuda),
                                          {.stream = meshcomm::stream_ref(stream)}));
        }
      };
      raw_calls(raw, warmup);
      raw_calls(raw_nonblocking, warmup);
      meshcomm_calls(warmup);
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      works.clear();
      const std::array<std::function<void()>, 3> variants = {
          [&] { raw_calls(raw, iterations); },
          [&] { raw_calls(raw_nonblocking, iterations); },
          [&] { meshcomm_calls(iterations); },
      };
      std::array<std::vector<double>, 3> times;  // raw, raw nonblocking, meshcomm
      std::vector<double> ratios;
      for (int round = 0; round < repeats; ++round) {
        std::array<double, 3> now{};
        for (std::size_t turn = 0; turn < variants.size(); ++turn) {
          const std::size_t v = (turn + static_cast<std::size_t>(round)) % variants.size();
          MPI_Barrier(MPI_COMM_WORLD);
          now[v] = microseconds_per_call(stream, iterations, variants[v]);
          for (auto& work : works) work.wait();
          works.clear();
        }
        for (std::size_t v = 0; v < now.size(); ++v) times[v].push_back(now[v]);
        ratios.push_back(now[2] / now[0]);
      }
      const double raw_us = median(times[0]);
      const double nonblocking_us = median(times[1]);
      const double meshcomm_us = median(times[2]);
      const double ratio = median(ratios);
      if (rank == 0) {
        fmt::print("  {:>10} {:>12.2f} {:>16.2f} {:>14.2f} {:>10.3f}\n", bytes, raw_us, nonblocking_us, meshcomm_us,
                   ratio);
      }
      records.push_back({{"op", "all_gather"}, {"backend", "nccl"}, {"ranks", size}, {"bytes", bytes},
                         {"raw_us", raw_us}, {"raw_nonblocking_us", nonblocking_us}, {"meshcomm_us", meshcomm_us},
                         {"ratio", ratio}});
    }
    if (rank == 0 && !json_path.empty()) std::ofstream(json_path) << records.dump(2) << "\n";
    (void)cudaFree(input);
    (void)cudaFree(output);
    (void)cudaStreamDestroy(stream);
    (void)ncclCommDestroy(raw);
    (void)ncclCommDestroy(raw_nonblocking);
  } catch (const std::exception& error) {
    fmt::print(stderr, "nccl_overhead_perf: rank {}: {}\n", rank, error.what());
    return 1;
  }
  return 0;
}
