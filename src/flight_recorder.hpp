#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "meshcomm/error.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// One call as a communicator's flight recorder keeps it.
struct FlightEntry {
  const char* operation = "";   ///< "all_gather", "barrier", "isend", ...
  std::int64_t sequence = -1;   ///< the operation's number on the communicator
  std::int64_t collective = -1;  ///< the collective's number (-1: not a collective)
  std::uint64_t bytes = 0;      ///< the larger of its buffers
  std::int32_t peer = -1;       ///< point to point: the peer
  DataType type = DataType::u8;
  std::uint64_t started_ticks = 0;  ///< FlightRecorder::ticks() when it started
  /// The index of the first call recorded after its Work was seen complete (0: not seen): the
  /// completion is placed by that call's start, so that noting it reads no clock.
  std::uint64_t seen_complete_before = 0;
};

/// A communicator's last calls, kept always (a few stores and a clock read as each starts, a store
/// as its Work is seen complete) and written out once, on the first failure one of its works
/// reports: to a file in MESHCOMM_TRACE_DIR (`meshcomm-trace-rank<R>-pid<P>-<N>.json`), else to
/// stderr. `tools/meshcomm-trace-merge` reads the ranks' files and names the first collective the
/// ranks did not all start alike.
class FlightRecorder {
 public:
  static constexpr std::size_t kEntries = 64;

  /// `rank` and `size` in the communicator, `world_rank` in its root world, `backend` its name.
  FlightRecorder(int rank, int size, int world_rank, std::string backend)
      : rank_(rank), size_(size), world_rank_(world_rank), backend_(std::move(backend)) {}

  /// Keeps `entry`, the oldest one giving way; returns its index, for completed().
  std::uint64_t record(FlightEntry entry) noexcept {
    entry.started_ticks = ticks();
    entries_[next_ % kEntries] = entry;
    return next_++;
  }

  /// Notes that the call kept at `index` is complete (nothing, if it has given way since): a
  /// store, no clock read, since it is on every call's path.
  void completed(std::uint64_t index) noexcept {
    if (next_ - index <= kEntries) entries_[index % kEntries].seen_complete_before = next_;
  }

  /// A cheap clock for start times: the time-stamp counter on x86-64 (a few ns to read, where
  /// the steady clock takes ~20), converted to the steady clock's nanoseconds only when a record
  /// is written; the steady clock's nanoseconds elsewhere.
  static std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return static_cast<std::uint64_t>(now_ns());
#endif
  }

  /// Writes the record with `error`, the first time only; never throws.
  void dump(const Error& error) noexcept;

  /// The record as JSON, oldest call first.
  [[nodiscard]] std::string to_json(const Error& error) const;

 private:
  static std::int64_t now_ns() noexcept;

  int rank_;
  int size_;
  int world_rank_;
  std::string backend_;
  std::array<FlightEntry, kEntries> entries_{};
  std::uint64_t next_ = 0;
  std::atomic<bool> dumped_{false};
};

}  // namespace meshcomm::detail
