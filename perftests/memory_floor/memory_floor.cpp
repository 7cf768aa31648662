#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/statistics.hpp"
#include "engine/turn_order.hpp"
#include "memory_floor/memory_floor.hpp"

namespace meshcomm::perf::memory_floor {
namespace {

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

}  // namespace

PageBuffer::PageBuffer(std::size_t bytes, unsigned char value) {
  const std::size_t pages = std::max<std::size_t>((bytes + 4095) / 4096, 1);
  data = static_cast<std::byte*>(std::aligned_alloc(4096, pages * 4096));
  if (data == nullptr) throw std::bad_alloc();
  std::memset(data, value, bytes);
}

PageBuffer::~PageBuffer() { std::free(data); }

void fill_floats(void* data, std::size_t bytes, float value) {
  std::fill_n(static_cast<float*>(data), bytes / sizeof(float), value);
}

void call_mpi(bool nonblocking, const std::function<void()>& blocking, const std::function<void(MPI_Request*)>& start) {
  if (!nonblocking) {
    blocking();
    return;
  }
  MPI_Request request;
  start(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

std::size_t count_wrong_sums(const Run& run, std::size_t count, const std::function<void()>& reset,
                             const std::function<void(bool)>& reduce,
                             const std::function<const float*(bool)>& result) {
  const int size = run.comm.size();
  const auto expected = static_cast<float>(size * (size + 1) / 2);
  std::size_t wrong = 0;
  for (bool in_place : {false, true}) {
    reset();
    MPI_Barrier(run.raw);
    reduce(in_place);
    const float* values = result(in_place);
    wrong += static_cast<std::size_t>(std::count_if(values, values + count, [&](float v) { return v != expected; }));
    MPI_Barrier(run.raw);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, run.raw);
  return wrong;
}

void time_and_report(const Run& run, std::size_t bytes, const std::vector<Variant>& variants) {
  std::vector<std::vector<double>> per_call(variants.size());
  const std::uint64_t seed = shared_turn_seed(run.comm);
  for (int round = 0; round < run.rounds; ++round) {
    for (const std::size_t v : turn_order(seed, round, variants.size())) {
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
                           {"backend", meshcomm::to_string(run.comm.backend())}, {"variant", variants[v].name},
                           {"in_place", variants[v].in_place}, {"time_us", us}, {"gbps", gbps},
                           {"mpi_best_over_variant", over_mpi}, {"floor_over_variant", over_floor}});
  }
}

}  // namespace meshcomm::perf::memory_floor
