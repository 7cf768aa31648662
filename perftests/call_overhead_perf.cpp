// call_overhead_perf: what meshcomm adds per call on top of the raw MPI call, at 8 bytes.
//
//   mpirun -np 2 build/perftests/call_overhead_perf [-n 20000] [-r 15] [--backend ucx]
//
// Each round times N calls of each variant back to back (so drift hits all alike); the table
// gives the median over rounds of the time per call, and the overhead over the raw MPI call:
// `algo=native` over the nonblocking call it makes, the default (the `eager` path at 8 bytes)
// over Open MPI's faster, blocking all-gather, and the barrier over `MPI_Barrier`.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/process_backend.hpp"
#include "engine/statistics.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

namespace {

struct Variant {
  std::string name;
  std::string baseline;  // the raw MPI variant it is compared with
  std::function<void()> call;
};

using meshcomm::perf::median;

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  int iterations = 20000;
  int rounds = 15;
  meshcomm::perf::CommandLine command_line{"meshcomm's per-call overhead over raw MPI at 8 bytes"};
  command_line.option("-n,--iters", iterations, "calls per variant per round").show_default();
  command_line.option("-r,--rounds", rounds, "rounds; the median is reported").show_default();
  std::string backend = "mpi";
  meshcomm::perf::add_process_backend_option(command_line, backend);
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;

  meshcomm::MpiBootstrap bootstrap;
  auto comm = meshcomm::Communicator::create(bootstrap, {.backend = meshcomm::perf::process_backend(backend)});
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  const int size = comm.size();
  const int rank = comm.rank();
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  std::uint64_t in = rank;
  std::vector<std::uint64_t> gathered(size);
  // all_to_allv: the one value to every rank (offset 0 each), one from each into `gathered`.
  std::vector<int> one_each(size, 1), zero_and_one(size, 0), in_order(size);
  std::vector<std::size_t> sizes_each(size, 1), sizes_zero(size, 0), sizes_in_order(size);
  for (int r = 0; r < size; ++r) in_order[r] = r, sizes_in_order[r] = static_cast<std::size_t>(r);
  std::uint64_t sent = rank;
  std::uint64_t received = 0;

  std::vector<Variant> variants = {
      {"MPI_Iallgather + MPI_Wait", "", [&] {
         MPI_Request request;
         MPI_Iallgather(&in, 8, MPI_BYTE, gathered.data(), 8, MPI_BYTE, raw, &request);
         MPI_Wait(&request, MPI_STATUS_IGNORE);
       }},
      {"all_gather algo=native", "MPI_Iallgather + MPI_Wait", [&] {
         comm.all_gather(meshcomm::ConstBufferView(&in, 1, meshcomm::DataType::u64), gathered, {.algorithm = "native"})
             .wait();
       }},
      {"MPI_Allgather", "", [&] { MPI_Allgather(&in, 8, MPI_BYTE, gathered.data(), 8, MPI_BYTE, raw); }},
      {"all_gather default", "MPI_Allgather", [&] {
         comm.all_gather(meshcomm::ConstBufferView(&in, 1, meshcomm::DataType::u64), gathered).wait();
       }},
      {"MPI_Irecv + MPI_Isend + MPI_Waitall", "", [&] {
         MPI_Request requests[2];
         MPI_Irecv(&received, 8, MPI_BYTE, left, 0, raw, &requests[0]);
         MPI_Isend(&sent, 8, MPI_BYTE, right, 0, raw, &requests[1]);
         MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
       }},
      {"irecv + isend + wait", "MPI_Irecv + MPI_Isend + MPI_Waitall", [&] {
         auto receive = comm.irecv(meshcomm::BufferView(&received, 1, meshcomm::DataType::u64), left, 0);
         comm.isend(meshcomm::ConstBufferView(&sent, 1, meshcomm::DataType::u64), right, 0).wait();
         receive.wait();
       }},
      {"MPI_Alltoallv", "", [&] {
         MPI_Alltoallv(&in, one_each.data(), zero_and_one.data(), MPI_UINT64_T, gathered.data(), one_each.data(),
                       in_order.data(), MPI_UINT64_T, raw);
       }},
      {"all_to_allv default", "MPI_Alltoallv", [&] {
         comm.all_to_allv(meshcomm::ConstBufferView(&in, 1, meshcomm::DataType::u64), gathered,
                          {.send_counts = sizes_each, .send_offsets = sizes_zero, .recv_counts = sizes_each,
                           .recv_offsets = sizes_in_order})
             .wait();
       }},
      {"MPI_Barrier", "", [&] { MPI_Barrier(raw); }},
      {"barrier", "MPI_Barrier", [&] { comm.barrier(); }},
  };

  if (comm.backend() != meshcomm::BackendKind::mpi) {  // only the mpi backend has MPI's own collectives
    std::erase_if(variants, [](const Variant& variant) { return variant.name == "all_gather algo=native"; });
  }
  std::vector<std::vector<double>> per_call(variants.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (int i = 0; i < iterations / 10; ++i) variants[v].call();  // warm up
      MPI_Barrier(raw);
      const auto started = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) variants[v].call();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count() /
                  iterations;
      MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, raw);
      per_call[v].push_back(us);
    }
  }
  if (rank == 0) {
    fmt::print("# call_overhead_perf: {} ranks, {} backend, 8 bytes, {} calls x {} rounds, median of the max over "
               "ranks\n",
               size, to_string(comm.backend()), iterations, rounds);
    fmt::print("{:<40} {:>12} {:>14}\n", "variant", "us/call", "overhead (us)");
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double mine = median(per_call[v]);
      std::string overhead = "-";
      for (std::size_t b = 0; b < variants.size(); ++b) {
        if (variants[b].name == variants[v].baseline) overhead = fmt::format("{:+.3f}", mine - median(per_call[b]));
      }
      fmt::print("{:<40} {:>12.3f} {:>14}\n", variants[v].name, mine, overhead);
    }
  }
  MPI_Comm_free(&raw);
  return 0;
}
