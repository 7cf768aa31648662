#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "meshcomm/communicator.hpp"
#include "mpi_reference.hpp"

namespace meshcomm::perf {

/// Element counts of one measurement (nccl-tests' getCollByteCount): buffer sizes, and where
/// the input and output sit inside the one buffer of an in-place run.
struct PerfCounts {
  std::size_t send = 0;
  std::size_t recv = 0;
  std::size_t in_place_send_offset = 0;
  std::size_t in_place_recv_offset = 0;
  /// The "count" column: elements per rank as nccl-tests reports them.
  std::size_t reported = 0;
};

/// What every call of a run shares.
struct PerfSettings {
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  std::string algorithm;  // empty: meshcomm's selection
  MemoryKind memory = MemoryKind::host;  // where the buffers live (--memory)
  StreamRef stream;                      // orders calls on CUDA memory
};

/// One operation measured by the common engine (one small file per operation).
class PerfOperation {
 public:
  virtual ~PerfOperation() = default;
  /// "all_gather", "reduce_scatter", ...
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual bool reduces() const noexcept { return false; }
  [[nodiscard]] virtual bool has_root() const noexcept { return false; }
  [[nodiscard]] virtual bool has_in_place() const noexcept { return true; }
  /// Whether `rank` sends its input in this operation (a broadcast's root alone does).
  [[nodiscard]] virtual bool sends(int /*rank*/, const PerfSettings& /*settings*/) const { return true; }
  /// Counts for a size of `count` elements over `ranks` ranks, seen from `rank`.
  [[nodiscard]] virtual PerfCounts counts(std::size_t count, int ranks, int rank) const = 0;
  /// busbw = algbw × this (nccl-tests' PERFORMANCE.md).
  [[nodiscard]] virtual double bus_factor(int ranks) const = 0;
  /// Fills the input with exactly predictable data. In place, `send` and `recv` point into one
  /// buffer at the offsets `counts` gives.
  virtual void fill(void* send, void* recv, const PerfCounts& counts, const PerfSettings& settings,
                    const Communicator& comm) const = 0;
  /// Number of wrong elements in the output after one call.
  [[nodiscard]] virtual std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                                                const Communicator& comm) const = 0;
  /// Starts one call.
  virtual Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
                     const PerfSettings& settings) const = 0;
  /// Open MPI's two calls for this operation (the mpi_best reference); empty names for none.
  [[nodiscard]] virtual MpiCallNames mpi_calls() const { return {}; }
  /// Runs Open MPI's call once, as `mpi` says, on the counts and settings of start().
  virtual void call_mpi(const MpiReference&, const PerfCounts&, const PerfSettings&) const {
    throw std::logic_error(std::string(name()) + "_perf has no Open MPI reference call");
  }
};

/// The whole program: parses nccl-tests' options, creates the world (mpirun or threads), runs the
/// size sweep out of place and in place, prints the table, writes JSON, and returns the exit code
/// (non-zero when any element was wrong).
int run_perf_main(int argc, char** argv, const PerfOperation& operation);

}  // namespace meshcomm::perf
