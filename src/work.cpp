#include "meshcomm/work.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include <time.h>

#include "meshcomm/error.hpp"
#include "backend/fatal_state.hpp"
#include "flight_recorder.hpp"
#include "progress_hooks.hpp"
#include "work_state.hpp"

namespace meshcomm {

bool Work::test() {
  if (state_ == nullptr) return true;
  try {
    if (!state_->test()) return false;
  } catch (const Error& error) {
    if (recorder_ != nullptr) recorder_->dump(error);
    throw;
  }
  note_completed();
  return true;
}

void Work::note_completed() noexcept {
  if (record_index_ == kNotRecorded) return;
  recorder_->completed(record_index_);
  record_index_ = kNotRecorded;
}

void Work::wait(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) [[unlikely]] {
    throw Error(ErrorCode::invalid_argument,
                "wait(timeout = " + std::to_string(timeout.count()) +
                    " ms): a timeout must be positive, or zero for the communicator's default; the operation is "
                    "still pending");
  }
  if (state_ == nullptr) return;
  try {
    // A wait that its first polls complete (a small message's reply, a peer a little behind)
    // never reads the clock for its deadline: that read and its arithmetic were a tenth of
    // an 8-byte ping-pong's instructions. The polls are those wait_until would make first.
    for (unsigned poll = 0; poll < detail::kPollsBeforeDeadline; ++poll) {
      if (state_->test()) {
        note_completed();
        return;
      }
      detail::backoff(poll);  // spins unless ranks outnumber cores (yield_when_idle)
    }
    state_->wait_until(detail::deadline_after(timeout.count() > 0 ? timeout : default_timeout_));
  } catch (const Error& error) {
    if (recorder_ != nullptr) recorder_->dump(error);
    throw;
  }
  note_completed();
}

namespace detail {

std::chrono::milliseconds remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds{0});
}

namespace {

Clock::duration as_duration(const timespec& time) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(time.tv_sec) +
                                                     std::chrono::nanoseconds(time.tv_nsec));
}

/// More than coarse_now() may lag behind Clock::now(): two ticks (the coarse clock moves once a
/// tick), or nothing where it is Clock::now().
Clock::duration coarse_lag() noexcept {
  static const Clock::duration lag = [] {
#if defined(CLOCK_MONOTONIC_COARSE)
    timespec resolution{};
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) == 0) return 2 * as_duration(resolution);
#endif
    return Clock::duration::zero();
  }();
  return lag;
}

}  // namespace

Clock::time_point coarse_now() noexcept {
#if defined(CLOCK_MONOTONIC_COARSE)
  // The steady clock is CLOCK_MONOTONIC; its coarse reading runs on the same timeline.
  static_assert(std::is_same_v<Clock, std::chrono::steady_clock>);
  timespec now{};
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &now) == 0) return Clock::time_point(as_duration(now));
#endif
  return Clock::now();
}

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  auto now = coarse_now() + coarse_lag();
  if (timeout > std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + timeout;
}

namespace {

/// Polls a wait makes before it first yields the core: 128 (a message between ranks on one node
/// takes well under a microsecond), or kIdlePolls once yield_when_idle was called.
constexpr unsigned kSpinPolls = 128;
constexpr unsigned kIdlePolls = 1;
std::atomic<unsigned> polls_before_yield{kSpinPolls};

/// Polls after which a wait naps 20 us between polls (a nap lasts 60-80 us with Linux's timer
/// slack). Where every rank has a core of its own, only a wait of about a second naps: a rank
/// that naps notices its peer late, and the skew costs more than the nap saves. Two ranks that
/// exchange 64 MiB through the mpi backend each post a receive and then a send; the rank that
/// comes late finds its peer's message announced and Open MPI copies it (one kernel copy, 16-20
/// ms) inside that rank's MPI_Irecv, before its MPI_Isend announces its own message, so the two
/// copies ran one after the other: 0.63-0.83x `mpi_best` at 32-64 MiB with naps after 4096 polls
/// (1-2 ms of polling), 0.92-1.02x without (sendrecv_perf, perftests/HISTORY.md). Where ranks
/// outnumber cores (nap_when_idle), the waiter's core is a peer's too, and naps start after 4096
/// polls.
constexpr unsigned kPollsBeforeNap = 1U << 20;
constexpr unsigned kIdlePollsBeforeNap = 4096;
std::atomic<unsigned> polls_before_nap{kPollsBeforeNap};

}  // namespace

void nap_when_idle() noexcept { polls_before_nap.store(kIdlePollsBeforeNap, std::memory_order_relaxed); }

void yield_when_idle() noexcept {
  polls_before_yield.store(kIdlePolls, std::memory_order_relaxed);
  nap_when_idle();
}

void backoff(unsigned spins) {
  if (spins < polls_before_yield.load(std::memory_order_relaxed)) return;
  if (spins < polls_before_nap.load(std::memory_order_relaxed)) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds{20});
  }
}

namespace {

// initial-exec: read on every poll, it must not cost a __tls_get_addr call each time, as the
// default model of a shared library does (a few bytes of the static TLS that glibc keeps for
// libraries loaded later, e.g. by Python).
[[gnu::tls_model("initial-exec")]] thread_local std::uint64_t progress_notes = 0;  ///< note_progress calls here

}  // namespace

void note_progress() noexcept { ++progress_notes; }

std::uint64_t progress_notes_on_this_thread() noexcept { return progress_notes; }

bool poll_until(const std::function<bool()>& done, Clock::time_point deadline) {
  std::uint64_t notes = progress_notes;
  for (unsigned spins = 0;; ++spins) {
    if (done()) return true;
    if ((spins & 63U) == 63U && Clock::now() >= deadline) return false;
    if ((spins & 15U) == 15U) drive_progress_hooks();  // the other transfers this rank posted
    if (progress_notes != notes) {  // something moved: poll again at once
      notes = progress_notes;
      spins = 0;
    }
    backoff(spins);
  }
}

void FatalOnError::mark(const Error& error) const {
  if (fatal_ != nullptr) fatal_->set(error);
}

bool GroupWorkState::test() {
  return fatal_on_error_.run([this] {
    // Test every part, so that each one progresses, even after the first incomplete one.
    bool all = true;
    for (auto& part : parts_) all = part.test() && all;
    return all;
  });
}

void GroupWorkState::wait_until(Clock::time_point deadline) {
  fatal_on_error_.run([&] {
    for (auto& part : parts_) {
      if (part.state() != nullptr) part.state()->wait_until(deadline);
    }
  });
}

bool GroupWorkState::fail_communicator_on_error(const std::shared_ptr<FatalState>& fatal) {
  fatal_on_error_.arm(fatal);
  return true;
}

bool ScheduleWorkState::advance_while_complete() {
  while (true) {
    // Test every work of the step, not only up to the first incomplete one: a poll that stops
    // at a send waiting for its peer would leave the receive beside it untouched, and on an
    // engine whose receives move in their own test (ucx's single-copy reads) the peer's send
    // then waits for whatever else progresses this rank.
    bool all = true;
    for (auto& work : current_) all = work.test() && all;
    if (!all) return false;
    current_.clear();
    if (next_step_ == steps_) return true;
    current_ = start_step(next_step_++);
  }
}

bool ScheduleWorkState::test() {
  return fatal_on_error_.run([this] { return advance_while_complete(); });
}

bool ScheduleWorkState::fail_communicator_on_error(const std::shared_ptr<FatalState>& fatal) {
  fatal_on_error_.arm(fatal);
  return true;
}

namespace {

bool sleep_on_first(const WorkList& works, Clock::time_point until) {
  for (const auto& work : works) {
    if (work.state() != nullptr) return work.state()->sleep_until_event(until);
  }
  return false;
}

}  // namespace

bool GroupWorkState::sleep_until_event(Clock::time_point until) { return sleep_on_first(parts_, until); }

bool ScheduleWorkState::sleep_until_event(Clock::time_point until) { return sleep_on_first(current_, until); }

void ScheduleWorkState::wait_until(Clock::time_point deadline) {
  fatal_on_error_.run([&] {
    while (!advance_while_complete()) {
      for (auto& work : current_) {
        if (work.state() != nullptr) work.state()->wait_until(deadline);
      }
    }
  });
}

}  // namespace detail

std::uint64_t progress_events_on_this_thread() noexcept { return detail::progress_notes_on_this_thread(); }

}  // namespace meshcomm
