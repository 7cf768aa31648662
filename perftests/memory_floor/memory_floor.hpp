#pragma once

// What memory_floor_perf's collectives share: the variants each times, the buffers they move,
// and the side-by-side timing that prints their rows.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::perf::memory_floor {

/// What a variant is to the paired columns.
enum class Role : std::uint8_t {
  mpi,    ///< one of Open MPI's calls: mpi_best of its placement is the faster of the two
  floor,  ///< a read+write floor of its placement: "floor / x" pairs with the faster of them
  other,
};

/// One row of the table: a name, what each rank does, its placement and role, and one call.
struct Variant {
  std::string name;
  std::string what;
  bool in_place;
  Role role;
  std::function<void()> call;
};

/// Page-aligned host memory, filled with `value`.
struct PageBuffer {
  PageBuffer(std::size_t bytes, unsigned char value);
  ~PageBuffer();
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::byte* data = nullptr;
};

/// What every size's measurement shares.
struct Run {
  Communicator& comm;
  MPI_Comm raw;
  int iterations;
  int rounds;
  detail::StoreWidth widest;
  const char* collective;
  nlohmann::json& records;
};

/// Times `variants` side by side for `run.rounds` rounds (each round in another order) and
/// prints a row for each, and its record; `bytes` is the size column (GB/s are of it).
void time_and_report(const Run& run, std::size_t bytes, const std::vector<Variant>& variants);

/// Sets the `bytes` at `data` to f32 `value`s.
void fill_floats(void* data, std::size_t bytes, float value);

/// Runs one of Open MPI's collectives: `blocking()`, or `start(&request)` and a wait for it.
void call_mpi(bool nonblocking, const std::function<void()>& blocking, const std::function<void(MPI_Request*)>& start);

/// A reduction's results on shared buffers (f32 sum), checked outside the timed loop at both
/// placements: `reset()` fills every rank's input with its rank + 1 and clears its output,
/// `reduce(in_place)` runs the call, and the `count` f32 at `result(in_place)` must each be the
/// sum of 1..size. Returns the wrong elements over all ranks.
std::size_t count_wrong_sums(const Run& run, std::size_t count, const std::function<void()>& reset,
                             const std::function<void(bool)>& reduce,
                             const std::function<const float*(bool)>& result);

/// One all-gather size (the output's bytes): Open MPI's all-gathers, meshcomm's `shm` and its
/// default on shared buffers, and a CMA single copy of user buffers beside the floors. Returns
/// the wrong bytes of the `shm` and the default results over all ranks.
std::size_t measure_all_gather(const Run& run, std::size_t bytes);

/// One reduce-scatter size (the input's bytes, f32 summed): Open MPI's reduce-scatters,
/// meshcomm's `shm` on shared buffers and its default on user buffers beside the floor. Returns
/// the `shm` results' wrong elements over all ranks.
std::size_t measure_reduce_scatter(const Run& run, std::size_t bytes);

/// One all-reduce size (the input's bytes, f32 summed): Open MPI's all-reduces, meshcomm's `shm`
/// on shared buffers and its default on user buffers beside the one-pass floor and the floor of
/// a reduce-scatter then all-gather. Returns the `shm` results' wrong elements over all ranks.
std::size_t measure_all_reduce(const Run& run, std::size_t bytes);

}  // namespace meshcomm::perf::memory_floor
