#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "meshcomm/error.hpp"
#include "meshcomm/work.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

using Clock = std::chrono::steady_clock;

class FatalState;

/// The works of one step or group: a list of up to 16 costs no malloc (recycled_allocation.hpp).
using WorkList = std::vector<Work, ShortListAllocator<Work, 16>>;

/// The progress and completion of one started operation, shared by its `Work` and its engine.
class WorkState {
 public:
  virtual ~WorkState() = default;
  /// True once complete; never blocks; throws the operation's Error if it failed.
  virtual bool test() = 0;
  /// Blocks until complete; throws the operation's Error, or a timeout Error at `deadline`.
  virtual void wait_until(Clock::time_point deadline) = 0;
  /// Makes a failure of this operation mark its communicator fatal (`fatal`), as a collective's
  /// must: one that failed part-way leaves its ranks out of step. True where the state does that
  /// itself (always, or from now on); false where the caller must wrap it in a state that does.
  virtual bool fail_communicator_on_error(const std::shared_ptr<FatalState>& /*fatal*/) { return false; }
  /// Sleeps until its engine has something to do for it (an event on the engine's wakeup file
  /// descriptor) or `until`, and returns true; returns false at once where the engine has no
  /// such descriptor, and the caller sleeps its own way. For idle progress threads.
  virtual bool sleep_until_event(Clock::time_point /*until*/) { return false; }
};

/// What a state that marks its communicator fatal itself when it fails holds: nothing until
/// fail_communicator_on_error arms it.
class FatalOnError {
 public:
  void arm(const std::shared_ptr<FatalState>& fatal) { fatal_ = fatal; }
  /// Returns `body()`; marks the communicator fatal, if armed, with an Error it throws, then rethrows.
  template <class Body>
  decltype(auto) run(Body&& body) {
    try {
      return body();
    } catch (const Error& error) {
      mark(error);
      throw;
    }
  }

 private:
  void mark(const Error& error) const;
  std::shared_ptr<FatalState> fatal_;
};

/// Completes when every one of its parts has; fails with the first part that fails.
class GroupWorkState final : public WorkState {
 public:
  explicit GroupWorkState(WorkList parts) : parts_(std::move(parts)) {}
  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// Sleeps on the first part's engine (the parts of a group share one).
  bool sleep_until_event(Clock::time_point until) override;
  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& fatal) override;

 private:
  WorkList parts_;
  FatalOnError fatal_on_error_;
};

/// A sequence of steps: each step starts a set of works, and the next step starts once they are
/// all complete. Progresses whenever it is tested or waited on. make_schedule makes one.
class ScheduleWorkState : public WorkState {
 public:
  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// Sleeps on the current step's engine.
  bool sleep_until_event(Clock::time_point until) override;
  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& fatal) override;

 protected:
  explicit ScheduleWorkState(int steps) : steps_(steps) {}
  /// Starts the first step, and the steps after it while they complete at once: the last thing
  /// a schedule's constructor does, once start_step can run.
  void start_steps() { advance_while_complete(); }
  /// Drops the current step's works: the first thing a schedule's destructor does, so that they
  /// go before what its steps captured (scratch they read or write), as they always did.
  void drop_works() noexcept { current_.clear(); }

 private:
  /// Starts step `step` and returns its works.
  virtual WorkList start_step(int step) = 0;
  bool advance_while_complete();

  int steps_;
  int next_step_ = 0;
  WorkList current_;
  FatalOnError fatal_on_error_;
};

/// A schedule whose steps `StartStep` starts, held in the schedule itself: unlike a
/// std::function of the same captures (a collective's arguments), making one allocates nothing
/// once the recycled blocks are warm.
template <class StartStep>
class ScheduleOf final : public ScheduleWorkState {
 public:
  ScheduleOf(int steps, StartStep start_step) : ScheduleWorkState(steps), start_step_(std::move(start_step)) {
    start_steps();
  }
  ~ScheduleOf() override { drop_works(); }
  ScheduleOf(const ScheduleOf&) = delete;
  ScheduleOf& operator=(const ScheduleOf&) = delete;

 private:
  WorkList start_step(int step) override { return start_step_(step); }
  StartStep start_step_;
};

/// A schedule of `steps` steps: `start_step(i)` starts step i and returns its works (a WorkList).
/// The first step starts here, and so do the ones after it that complete at once.
template <class StartStep>
std::shared_ptr<WorkState> make_schedule(int steps, StartStep start_step) {
  return make_recycled<ScheduleOf<StartStep>>(steps, std::move(start_step));
}

/// Tells the waits on this thread that an engine just moved something (a fragment of a large
/// transfer), so that they poll again at once instead of backing off: engines that move large
/// messages piece by piece in their progress calls (ucx) would otherwise sleep between pieces.
void note_progress() noexcept;

/// How often note_progress was called on this thread.
std::uint64_t progress_notes_on_this_thread() noexcept;

/// How many times Work::wait tests its operation before it reads the clock for a deadline and
/// waits with poll_until: fewer than poll_until's polls before it first yields the core, unless
/// yield_when_idle was called.
inline constexpr unsigned kPollsBeforeDeadline = 32;

/// Waits a little before polling again: a bare spin for the first polls (a message between
/// ranks on one node takes well under a microsecond), then yielding the core; short sleeps only
/// once a wait has gone on for about a second, or, where ranks outnumber cores (nap_when_idle),
/// after a few thousand polls. `spins` counts the polls so far.
void backoff(unsigned spins);

/// Makes every wait of this process nap between polls from its 4096th poll on, instead of after
/// about a second: for ranks that outnumber their host's cores (host_cores.hpp), where a waiter
/// that only yields still takes a share of the core the rank it waits for needs. The inproc
/// world calls it where its threads outnumber the process's cores, yield_when_idle() always; it
/// lasts as long as the process.
void nap_when_idle() noexcept;

/// Makes every wait of this process yield its core from its second poll on instead of spinning
/// first, and nap from its 4096th (nap_when_idle): for ranks that outnumber their host's cores,
/// where a spinning waiter keeps the rank it waits for from running (the eager slots' writer,
/// UCX's shared-memory transports, which move a message only while both processes run). Both
/// host backends call it when they see that at creation. It lasts as long as the process.
void yield_when_idle() noexcept;

/// Calls `done()` until it returns true or `deadline` passes, yielding the core in between and
/// driving every registered engine now and then (progress_hooks.hpp); returns false at the
/// deadline. For states that progress by being tested.
bool poll_until(const std::function<bool()>& done, Clock::time_point deadline);

/// Time left until `deadline`, for wait calls that take a duration (never negative).
std::chrono::milliseconds remaining(Clock::time_point deadline);

/// The steady clock at the resolution of the system's tick (never ahead of Clock::now(), behind
/// it by less than one tick, a few milliseconds), at about a quarter of its cost: for when an
/// operation started and when a wait gives up, which only timeouts and their messages read.
Clock::time_point coarse_now() noexcept;

/// A time at least `timeout` after now and at most two ticks beyond that (a wait never gives up
/// early), read from coarse_now(); saturating instead of overflowing for huge timeouts.
Clock::time_point deadline_after(std::chrono::milliseconds timeout);

}  // namespace meshcomm::detail
