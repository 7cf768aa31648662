// memory_floor_perf: the floor under any host all-gather or reduce-scatter on this node — how
// fast its ranks, all at once, can move the collective's bytes through memory — beside Open MPI's
// own call, meshcomm's single-copy `shm` path and, for the all-gather, a single-copy all-gather of
// user buffers through the kernel (CMA), measured in one run.
//
//   mpirun -np 2 build/perftests/memory_floor_perf [--collective all_gather|reduce_scatter] [-b 4M] [-e 64M]
//                                                  [-f 4] [-n 10] [-r 7] [--json FILE]
//
// Sizes are as in all_gather_perf's and reduce_scatter_perf's size columns: an all-gather's
// output, a reduce-scatter's input (f32, summed), bytes per rank. Every rank times its calls at
// once; each round runs every variant in turn (in another order each round, as the other
// perftests do), and the table gives the median over rounds of the slowest rank's time per call.
// Two paired columns (in each round, the reference at the row's placement over the row's time;
// the median of those ratios):
// - "mpi_best / x": the faster of Open MPI's two calls (blocking, and nonblocking as meshcomm's
//   `native` calls it), the one with the lower median over the rounds;
// - "floor / x": the read+write floor, streaming copies of what the collective must move. An
//   all-gather: out of place every rank reads and writes the whole output, in place all but its
//   own block, from a block-sized source per rank (the node's inputs are that big). A
//   reduce-scatter: every rank reads an input's worth of blocks and writes their sum, its output,
//   by the faster of two kernels (sums in a cached chunk streamed out, or plain stores straight
//   into the output, as meshcomm's reductions write). No call can beat it by more than noise; its
//   "mpi_best / x" is the most that any call can gain over Open MPI's here.
// The store-only floor (streaming stores from a cached source, all-gather) counts the writes
// alone and is not reachable: the bytes must be read from somewhere. The floors hold for buffers
// larger than a core's share of the last-level cache: smaller ones stay cached, and a plain copy
// beats streaming stores there.

#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/perf_options.hpp"
#include "engine/statistics.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "reduction.hpp"
#include "streaming_copy.hpp"

namespace {

using meshcomm::detail::StoreWidth;
using meshcomm::perf::median;
using meshcomm::perf::lowest_median;
using meshcomm::perf::paired_speedup;

/// What a variant is to the paired columns.
enum class Role : std::uint8_t {
  mpi,    // one of Open MPI's all-gathers: mpi_best of its placement is the faster of the two
  floor,  // the read+write floor of its placement
  other,
};

struct Variant {
  std::string name;
  std::string what;
  bool in_place;
  Role role;
  std::function<void()> call;
};

/// Page-aligned host memory, filled with `value`.
struct PageBuffer {
  PageBuffer(std::size_t bytes, unsigned char value) {
    const std::size_t pages = std::max<std::size_t>((bytes + 4095) / 4096, 1);
    data = static_cast<std::byte*>(std::aligned_alloc(4096, pages * 4096));
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, value, bytes);
  }
  ~PageBuffer() { std::free(data); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::byte* data = nullptr;
};

/// Variant `v`'s speedup over the variants of `role` at its placement (paired_speedup()): over
/// the one of them with the lowest median (lowest_median()), paired round by round.
double speedup_over(Role role, const std::vector<Variant>& variants, const std::vector<std::vector<double>>& per_call,
                    std::size_t v) {
  std::vector<std::vector<double>> candidates;
  for (std::size_t n = 0; n < variants.size(); ++n) {
    if (variants[n].role == role && variants[n].in_place == variants[v].in_place) candidates.push_back(per_call[n]);
  }
  if (candidates.empty()) return 0;
  return paired_speedup(candidates[lowest_median(candidates)], per_call[v]);
}

/// Writes `bytes` at `to` with streaming stores from a small source that stays in the cache:
/// the memory traffic of writing the output and nothing else.
void stream_write(std::byte* to, const std::byte* cached_source, std::size_t source_bytes, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes; done += source_bytes) {
    meshcomm::detail::streaming_copy(to + done, cached_source, std::min(source_bytes, bytes - done));
  }
}

/// Sums the `blocks` blocks of `block` bytes (f32) at `source` into `to`: a reduce-scatter's
/// traffic, its input blocks read once and its output written once. `streaming`: a cached chunk
/// at a time, written out with streaming stores (meshcomm's reduce_streaming); otherwise plain
/// stores straight into `to`, as meshcomm's reduce_pair writes. `to` may be the first block.
void sum_blocks(std::byte* to, const std::byte* source, int blocks, std::size_t block, bool streaming) {
  std::vector<const void*> inputs;
  for (int b = 0; b < blocks; ++b) inputs.push_back(source + static_cast<std::size_t>(b) * block);
  const std::size_t count = block / sizeof(float);
  constexpr auto f32 = meshcomm::DataType::f32;
  constexpr auto sum = meshcomm::ReduceOp::sum;
  if (streaming) {
    meshcomm::detail::reduce_streaming(to, inputs, count, f32, sum);
    return;
  }
  if (blocks == 1) {
    std::memmove(to, inputs[0], block);
    return;
  }
  meshcomm::detail::reduce_pair(to, inputs[0], inputs[1], count, f32, sum);
  for (std::size_t b = 2; b < inputs.size(); ++b) meshcomm::detail::reduce_into(to, inputs[b], count, f32, sum);
}

/// Sets the `bytes` at `data` to f32 `value`s.
void fill_floats(void* data, std::size_t bytes, float value) {
  std::fill_n(static_cast<float*>(data), bytes / sizeof(float), value);
}

/// What every size's measurement shares.
struct Run {
  meshcomm::Communicator& comm;
  MPI_Comm raw;
  int iterations;
  int rounds;
  StoreWidth widest;
  const char* collective;
  nlohmann::json& records;
};

/// Times `variants` side by side for `run.rounds` rounds and prints a row for each; `bytes` is
/// the size column (GB/s are of it).
void time_and_report(const Run& run, std::size_t bytes, const std::vector<Variant>& variants) {
  std::vector<std::vector<double>> per_call(variants.size());
  for (int round = 0; round < run.rounds; ++round) {
    for (std::size_t position = 0; position < variants.size(); ++position) {
      const std::size_t v = meshcomm::perf::rotated_turn(round, position, variants.size());
      variants[v].call();  // untimed: the first touch of fresh pages is not the variant's cost
      MPI_Barrier(run.raw);
      const auto started = std::chrono::steady_clock::now();
      for (int i = 0; i < run.iterations; ++i) variants[v].call();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count() /
                  run.iterations;
      MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, run.raw);
      per_call[v].push_back(us);
    }
  }
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const double us = median(per_call[v]);
    const double gbps = static_cast<double>(bytes) / us / 1e3;
    const double over_mpi = speedup_over(Role::mpi, variants, per_call, v);
    const double over_floor = speedup_over(Role::floor, variants, per_call, v);
    if (run.comm.rank() == 0) {
      fmt::print("{:>12} {:<34} {:>11.1f} {:>9.2f} {:>12.2f}x {:>9.2f}x  {}\n", bytes, variants[v].name, us, gbps,
                 over_mpi, over_floor, variants[v].what);
    }
    run.records.push_back({{"collective", run.collective}, {"bytes", bytes}, {"ranks", run.comm.size()},
                           {"variant", variants[v].name}, {"in_place", variants[v].in_place}, {"time_us", us},
                           {"gbps", gbps}, {"mpi_best_over_variant", over_mpi}, {"floor_over_variant", over_floor}});
  }
}

/// One all-gather size (the output's bytes): times Open MPI's all-gathers, meshcomm's `shm` and the
/// CMA single copy beside the floors; returns the `shm` results' wrong bytes over all ranks.
std::size_t measure_all_gather(const Run& run, std::size_t bytes) {
  auto& comm = run.comm;
  const MPI_Comm raw = run.raw;
  const int size = comm.size();
  const int rank = comm.rank();
  const StoreWidth widest = run.widest;
  constexpr std::size_t kCachedSource = std::size_t{64} << 10;
  PageBuffer cached_source(kCachedSource, 0x5A);
  const std::size_t block = bytes / static_cast<std::size_t>(size);
  bytes = block * static_cast<std::size_t>(size);
  PageBuffer user_input(block, static_cast<unsigned char>(rank + 1));
  PageBuffer output(bytes, 0);
  PageBuffer gathered_by_mpi(bytes, 0);  // Open MPI's own, as all_gather_perf gives native its buffers
  PageBuffer private_source(bytes, 0x33);
  PageBuffer own_block(block, 0x44);
  auto shared_input = comm.allocate_shared(block);
  auto shared_output = comm.allocate_shared(bytes);
  std::memset(shared_input.data(), rank + 1, block);
  // A single-copy all-gather of user buffers through the kernel (CMA, as Open MPI's vader
  // uses it): each rank reads its peers' blocks straight from their memory with
  // process_vm_readv, then all wait until every rank has read (the inputs must stay put).
  struct Peer {
    std::uint64_t pid;
    std::uint64_t address;
  };
  const Peer me{static_cast<std::uint64_t>(getpid()), reinterpret_cast<std::uint64_t>(user_input.data)};
  std::vector<Peer> peers(static_cast<std::size_t>(size));
  MPI_Allgather(&me, sizeof me, MPI_BYTE, peers.data(), sizeof me, MPI_BYTE, raw);
  const auto cma_gather = [&] {
    for (int peer = 0; peer < size; ++peer) {
      std::byte* to = output.data + static_cast<std::size_t>(peer) * block;
      if (peer == rank) {
        std::memcpy(to, user_input.data, block);
        continue;
      }
      const iovec local{to, block};
      const iovec remote{reinterpret_cast<void*>(peers[peer].address), block};
      if (process_vm_readv(static_cast<pid_t>(peers[peer].pid), &local, 1, &remote, 1, 0) !=
          static_cast<ssize_t>(block)) {
        throw std::runtime_error(fmt::format("process_vm_readv from rank {}: {}", peer, std::strerror(errno)));
      }
    }
    MPI_Barrier(raw);
  };
  const auto shm_gather = [&](bool in_place) {
    auto* gathered = static_cast<std::byte*>(shared_output.data());
    const void* own = in_place ? gathered + rank * block : shared_input.data();
    comm.all_gather(meshcomm::ConstBufferView(own, block, meshcomm::DataType::u8),
                    meshcomm::BufferView(gathered, bytes, meshcomm::DataType::u8), {.algorithm = "shm"})
        .wait();
  };
  const auto mpi_gather = [&](bool in_place, bool nonblocking) {
    const void* send = in_place ? MPI_IN_PLACE : user_input.data;
    const int count = static_cast<int>(block);
    if (!nonblocking) {
      MPI_Allgather(send, count, MPI_BYTE, gathered_by_mpi.data, count, MPI_BYTE, raw);
      return;
    }
    MPI_Request request;
    MPI_Iallgather(send, count, MPI_BYTE, gathered_by_mpi.data, count, MPI_BYTE, raw, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  };
  const std::size_t written_in_place = bytes - block;
  const auto copy_with = [&](StoreWidth width) {
    return [&, width] { meshcomm::detail::streaming_copy(output.data, private_source.data, bytes, width); };
  };
  // The floor's traffic is an all-gather's: `blocks` blocks read from a block-sized source per
  // rank (the node reads from `bytes` of inputs, as the ranks' blocks are) and written out.
  const auto copy_blocks = [&](int blocks) {
    return [&, blocks] {
      for (int b = 0; b < blocks; ++b) {
        meshcomm::detail::streaming_copy(output.data + b * block, own_block.data, block, widest);
      }
    };
  };
  std::vector<Variant> variants = {
      {"MPI_Allgather", "Open MPI's all-gather", false, Role::mpi, [&] { mpi_gather(false, false); }},
      {"MPI_Iallgather", "the same, nonblocking (meshcomm's native)", false, Role::mpi,
       [&] { mpi_gather(false, true); }},
      {"meshcomm shm", "all_gather algo=shm, shared buffers", false, Role::other, [&] { shm_gather(false); }},
      {"CMA single copy", "process_vm_readv of the peers' user buffers", false, Role::other, cma_gather},
      {"read+write floor", "streaming copies of its block over the whole output", false, Role::floor,
       copy_blocks(size)},
      {"store-only floor", "streaming stores of the whole output, no reads", false, Role::other,
       [&] { stream_write(output.data, cached_source.data, kCachedSource, bytes); }},
      {"MPI_Allgather in place", "Open MPI's all-gather, MPI_IN_PLACE", true, Role::mpi,
       [&] { mpi_gather(true, false); }},
      {"MPI_Iallgather in place", "the same, nonblocking", true, Role::mpi, [&] { mpi_gather(true, true); }},
      {"meshcomm shm in place", "all_gather algo=shm, in place", true, Role::other, [&] { shm_gather(true); }},
      {"read+write floor in place", "the same over the peers' blocks", true, Role::floor,
       copy_blocks(size - 1)},
      {"store-only floor in place", "streaming stores of the peers' blocks", true, Role::other,
       [&] { stream_write(output.data, cached_source.data, kCachedSource, written_in_place); }},
      {"streaming copy sse2", "the whole output from an output-sized source, 16-byte stores", false, Role::other,
       copy_with(StoreWidth::sse2)},
      {"memcpy", "the same with memcpy", false, Role::other,
       [&] { std::memcpy(output.data, private_source.data, bytes); }},
  };
  std::erase_if(variants, [&](const Variant& variant) {
    return variant.name == "streaming copy sse2" && widest == StoreWidth::sse2;  // the floor's own copy
  });
  // The shm all-gather's results, checked outside the timed loop at both placements: block r of
  // the output holds rank r's bytes.
  std::size_t wrong = 0;
  for (bool in_place : {false, true}) {
    auto* gathered = static_cast<unsigned char*>(shared_output.data());
    std::memset(gathered, 0, bytes);
    if (in_place) std::memset(gathered + rank * block, rank + 1, block);
    MPI_Barrier(raw);
    shm_gather(in_place);
    for (int from = 0; from < size; ++from) {
      wrong += static_cast<std::size_t>(std::count_if(gathered + from * block, gathered + (from + 1) * block,
                                                      [&](unsigned char value) { return value != from + 1; }));
    }
    MPI_Barrier(raw);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, raw);
  time_and_report(run, bytes, variants);
  return wrong;
}

/// One reduce-scatter size (the input's bytes, f32 summed): times Open MPI's reduce-scatters,
/// meshcomm's `shm` on shared buffers and its default on user buffers beside the floor; returns
/// the `shm` results' wrong elements over all ranks.
std::size_t measure_reduce_scatter(const Run& run, std::size_t bytes) {
  auto& comm = run.comm;
  const MPI_Comm raw = run.raw;
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = bytes / sizeof(float) / static_cast<std::size_t>(size);  // output elements
  const std::size_t block = count * sizeof(float);
  bytes = block * static_cast<std::size_t>(size);
  const auto own_value = static_cast<float>(rank + 1);
  PageBuffer user_input(bytes, 0);
  PageBuffer user_output(block, 0);
  PageBuffer reduced_by_mpi(block, 0);  // Open MPI's own, as reduce_scatter_perf gives native its buffers
  PageBuffer mpi_in_place(bytes, 0);
  PageBuffer private_source(bytes, 0);
  PageBuffer floor_output(block, 0);
  fill_floats(user_input.data, bytes, own_value);
  fill_floats(mpi_in_place.data, bytes, own_value);
  fill_floats(private_source.data, bytes, 1.0F);
  auto shared_input = comm.allocate_shared(bytes);
  auto shared_output = comm.allocate_shared(block);
  const auto shm_reduce = [&](bool in_place) {
    auto* input = static_cast<std::byte*>(shared_input.data());
    void* output = in_place ? input + static_cast<std::size_t>(rank) * block : shared_output.data();
    comm.reduce_scatter(meshcomm::ConstBufferView(input, count * size, meshcomm::DataType::f32),
                        meshcomm::BufferView(output, count, meshcomm::DataType::f32), {.algorithm = "shm"})
        .wait();
  };
  const auto mpi_reduce = [&](bool in_place, bool nonblocking) {
    const void* send = in_place ? MPI_IN_PLACE : user_input.data;
    void* receive = in_place ? mpi_in_place.data : reduced_by_mpi.data;
    const int per_rank = static_cast<int>(count);
    if (!nonblocking) {
      MPI_Reduce_scatter_block(send, receive, per_rank, MPI_FLOAT, MPI_SUM, raw);
      return;
    }
    MPI_Request request;
    MPI_Ireduce_scatter_block(send, receive, per_rank, MPI_FLOAT, MPI_SUM, raw, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  };
  // In place the sums land in the first of the blocks read, as meshcomm's in-place output is the
  // rank's own block of its input: no separate output to write.
  const auto floor = [&](bool streaming, bool in_place) {
    return [&, streaming, in_place] {
      sum_blocks(in_place ? private_source.data : floor_output.data, private_source.data, size, block, streaming);
    };
  };
  // In place, every call sums the sums of the call before: the values grow (to infinity after
  // enough calls), which costs nothing extra in these kernels.
  std::vector<Variant> variants = {
      {"MPI_Reduce_scatter_block", "Open MPI's reduce-scatter", false, Role::mpi, [&] { mpi_reduce(false, false); }},
      {"MPI_Ireduce_scatter_block", "the same, nonblocking (meshcomm's native)", false, Role::mpi,
       [&] { mpi_reduce(false, true); }},
      {"meshcomm shm", "reduce_scatter algo=shm, shared buffers", false, Role::other, [&] { shm_reduce(false); }},
      {"meshcomm default, user buffers", "reduce_scatter as the table picks it on them", false, Role::other,
       [&] {
         comm.reduce_scatter(meshcomm::ConstBufferView(user_input.data, count * size, meshcomm::DataType::f32),
                             meshcomm::BufferView(user_output.data, count, meshcomm::DataType::f32))
             .wait();
       }},
      {"read+write floor", "sums of an input's blocks, cached, then streamed out", false, Role::floor,
       floor(true, false)},
      {"read+write floor, plain stores", "the same sums straight into its block", false, Role::floor,
       floor(false, false)},
      {"MPI_Reduce_scatter_block in place", "Open MPI's reduce-scatter, MPI_IN_PLACE", true, Role::mpi,
       [&] { mpi_reduce(true, false); }},
      {"MPI_Ireduce_scatter_block in place", "the same, nonblocking", true, Role::mpi, [&] { mpi_reduce(true, true); }},
      {"meshcomm shm in place", "reduce_scatter algo=shm, output in its input", true, Role::other,
       [&] { shm_reduce(true); }},
      {"read+write floor in place", "the same, the sums over its first block", true, Role::floor,
       floor(true, true)},
      {"read+write floor, plain, in place", "the same, plain stores", true, Role::floor, floor(false, true)},
  };
  // The shm reduce-scatter's results, checked outside the timed loop at both placements: every
  // element is the sum of the ranks' values 1..size.
  const auto expected = static_cast<float>(size * (size + 1) / 2);
  std::size_t wrong = 0;
  for (bool in_place : {false, true}) {
    fill_floats(shared_input.data(), bytes, own_value);
    fill_floats(shared_output.data(), block, 0.0F);
    MPI_Barrier(raw);
    shm_reduce(in_place);
    const auto* result = static_cast<const float*>(in_place ? static_cast<void*>(static_cast<std::byte*>(
                                                                  shared_input.data()) + rank * block)
                                                            : shared_output.data());
    wrong += static_cast<std::size_t>(
        std::count_if(result, result + count, [&](float value) { return value != expected; }));
    MPI_Barrier(raw);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, raw);
  time_and_report(run, bytes, variants);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  std::string collective = "all_gather";
  std::string min_text = "4M";
  std::string max_text = "64M";
  int factor = 4;
  int iterations = 10;
  int rounds = 7;
  std::string json_path;
  meshcomm::perf::CommandLine command_line{
      "the memory floor under a host all-gather or reduce-scatter, beside Open MPI's call and meshcomm's shm path"};
  command_line.option("--collective", collective, "which collective's traffic to measure")
      .one_of({"all_gather", "reduce_scatter"})
      .show_default();
  command_line.option("-b,--minbytes", min_text,
                      "smallest size per rank: an all-gather's output, a reduce-scatter's input (K, M, G suffixes)")
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
  auto comm = meshcomm::Communicator::create(bootstrap);
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  const int size = comm.size();
  const int rank = comm.rank();
  const bool reduce_scatter = collective == "reduce_scatter";
  // A reduce-scatter's size must leave every rank at least one f32 of output.
  const std::size_t smallest = static_cast<std::size_t>(size) * (reduce_scatter ? sizeof(float) : 1);
  std::size_t min_bytes = 0;
  std::size_t max_bytes = 0;
  try {
    min_bytes = meshcomm::perf::parse_size(min_text, "-b");
    max_bytes = meshcomm::perf::parse_size(max_text, "-e");
    if (min_bytes < smallest) {
      throw std::invalid_argument(fmt::format("-b {} leaves less than {} per rank for {} ranks; give at least {}",
                                              min_text, reduce_scatter ? "one f32" : "a byte", size, smallest));
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
    fmt::print("# memory_floor_perf: {}, {} ranks, all at once; {} calls x {} rounds, median of the slowest rank\n",
               collective, size, iterations, rounds);
    fmt::print("{:>12} {:<34} {:>11} {:>9} {:>13} {:>10}  {}\n", "size (B)", "variant", "time (us)", "GB/s",
               "mpi_best / x", "floor / x", "what each rank does");
  }
  nlohmann::json records = nlohmann::json::array();
  const Run run{.comm = comm,
                .raw = raw,
                .iterations = iterations,
                .rounds = rounds,
                .widest = meshcomm::detail::has_store_width(StoreWidth::avx2) ? StoreWidth::avx2 : StoreWidth::sse2,
                .collective = reduce_scatter ? "reduce_scatter" : "all_gather",
                .records = records};
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<std::size_t>(factor)) {
    const std::size_t wrong = reduce_scatter ? measure_reduce_scatter(run, bytes) : measure_all_gather(run, bytes);
    if (wrong > 0) {
      if (rank == 0) fmt::print("# shm {}: {} wrong {} at {} B\n", collective, wrong,
                                reduce_scatter ? "elements" : "bytes", bytes);
      MPI_Comm_free(&raw);
      return 1;
    }
  }
  if (rank == 0 && !json_path.empty()) std::ofstream(json_path) << records.dump(2) << '\n';
  MPI_Comm_free(&raw);
  return 0;
}
