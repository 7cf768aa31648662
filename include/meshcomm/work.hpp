#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "meshcomm/export.hpp"

namespace meshcomm {

namespace detail {
class WorkState;
class FlightRecorder;
}

/// The handle of one started operation.
///
/// Move-only; `test()` never blocks; `wait()` blocks until the operation is complete or its
/// timeout passes, and rethrows the operation's `Error`. A `Work` that is destroyed before it
/// completes does not cancel the operation: its buffers must stay valid until it completes.
///
/// Right: `auto work = comm.irecv(buffer, 1, 7); compute(); work.wait();`
/// Wrong: `comm.irecv(std::span(temporary), 1, 7);` the buffer dies before the data arrives.
class [[nodiscard]] MESHCOMM_API Work {
 public:
  // Made, moved and destroyed inline: every call returns one, and a call into the library for
  // each would be a measurable part of a small collective's cost.
  /// The record index of a work its communicator's flight recorder keeps no entry for.
  static constexpr std::uint64_t kNotRecorded = ~std::uint64_t{0};

  /// A work that is already complete.
  Work() noexcept = default;
  /// Wraps an operation's state; `default_timeout` applies to `wait()` without an argument;
  /// `recorder` keeps the call at `record_index` (kNotRecorded: it keeps no entry for it).
  Work(std::shared_ptr<detail::WorkState> state, std::chrono::milliseconds default_timeout,
       detail::FlightRecorder* recorder = nullptr, std::uint64_t record_index = kNotRecorded) noexcept
      : state_(std::move(state)), default_timeout_(default_timeout), recorder_(recorder), record_index_(record_index) {}
  Work(Work&&) noexcept = default;
  Work& operator=(Work&&) noexcept = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() = default;

  /// True once the operation is complete. Never blocks; throws the operation's `Error` if it
  /// failed.
  [[nodiscard]] bool test();

  /// Blocks until the operation is complete; throws its `Error` if it failed, or an `Error` with
  /// `ErrorCode::timeout` naming the operation and peer after `timeout` (zero: the
  /// communicator's default, from `CommOptions::timeout` or `MESHCOMM_TIMEOUT`). A negative
  /// timeout is `ErrorCode::invalid_argument`, and the operation stays pending.
  void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  /// The timeout `wait()` uses when given none.
  [[nodiscard]] std::chrono::milliseconds default_timeout() const noexcept { return default_timeout_; }

  /// Internal: the shared state, for composing works inside meshcomm.
  [[nodiscard]] const std::shared_ptr<detail::WorkState>& state() const noexcept { return state_; }

 private:
  std::shared_ptr<detail::WorkState> state_;
  std::chrono::milliseconds default_timeout_{0};
  /// Tells the flight recorder the call completed, once.
  void note_completed() noexcept;

  /// The communicator's flight recorder, told of the first failure (null: none).
  detail::FlightRecorder* recorder_ = nullptr;
  /// This call's entry in it.
  std::uint64_t record_index_ = kNotRecorded;
};

/// How many times, on the calling thread, an engine that meshcomm drives has moved part of a
/// transfer while a Work was tested (UCX's worker moves a large message piece by piece). A loop
/// that polls Works itself compares it across a poll: while it grows, data is moving, and the
/// next poll should come at once rather than after a nap, as `Work::wait` does.
MESHCOMM_API std::uint64_t progress_events_on_this_thread() noexcept;

}  // namespace meshcomm
