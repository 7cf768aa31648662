#pragma once

#include <mpi.h>

#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "call_record.hpp"
#include "collective_args.hpp"
#include "mpi_timeout_report.hpp"
#include "process_liveness.hpp"

namespace meshcomm::detail {

class DeferredNative;

/// Where Open MPI's own collectives run: one communicator per shape of call.
///
/// Open MPI matches collectives by order alone, so ranks that disagree about a call (kind,
/// dtype, count, op, root) would be matched anyway: wrong data, or a truncation that Open MPI
/// answers by aborting the job after writing past a buffer. Instead each shape runs on its own
/// duplicate of the communicator, made at the shape's first call after the ranks have exchanged
/// what they are calling: a disagreement there is an invalid_argument on every rank listing each
/// rank's call, and ranks that disagree later wait on different communicators, never on one
/// another's messages, and time out. Nothing blocks: a call that needs an agreement is queued,
/// and queued calls are posted in call order as their works are tested, so that every rank
/// posts them alike. all_to_allv's counts differ by rank: its shape is its kind and dtype, and
/// every all_to_allv is queued behind an exchange of its pair counts, which every pair must
/// agree on (a small all-to-all of 16 bytes per peer). Past
/// kMaxShapes shapes, the further ones share one communicator and every call of theirs is
/// agreed first (a small all-gather each).
class MpiNativeShapes {
 public:
  /// Posts the native collective of `args` on `comm` and returns its state.
  using Post = std::function<std::shared_ptr<WorkState>(const CollectiveArgs& args, MPI_Comm comm)>;

  static constexpr std::size_t kMaxShapes = 64;

  /// Shapes are agreed and duplicated on `base` (`size` ranks), which carries no other
  /// collective; `processes` and `reports` (the backend's) tell a rank that ended, and where the
  /// others are when a call waits too long for an agreement.
  MpiNativeShapes(MPI_Comm base, int size, std::shared_ptr<FatalState> fatal, const RankProcesses* processes,
                  const MpiTimeoutReports* reports, Post post);
  ~MpiNativeShapes();
  MpiNativeShapes(const MpiNativeShapes&) = delete;
  MpiNativeShapes& operator=(const MpiNativeShapes&) = delete;

  /// The communicator of `shape` (a CallRecord without its number) if the ranks have agreed on
  /// it and no earlier call is still queued, so that this call can be posted at once; else
  /// MPI_COMM_NULL, and the call goes to defer().
  [[nodiscard]] MPI_Comm ready_comm(const CallRecord& shape) noexcept {
    if (!queue_.empty() || shape.kind == static_cast<std::uint8_t>(CollectiveKind::all_to_allv)) return MPI_COMM_NULL;
    if (last_comm_ != MPI_COMM_NULL && last_shape_ == shape) return last_comm_;
    return find_ready(shape);
  }

  /// Queues the call behind those already queued, starting the agreement of its shape if the
  /// shape is new. Never blocks; the call is posted once it is agreed and everything queued
  /// before it is posted.
  std::shared_ptr<WorkState> defer(const CollectiveArgs& args, const ErrorContext& where);

  /// Posts, in order, the queued calls that can be posted now. Their works call it as they are
  /// tested.
  void drain();

  [[nodiscard]] const RankProcesses* processes() const noexcept { return processes_; }
  [[nodiscard]] const MpiTimeoutReports* reports() const noexcept { return reports_; }

  /// True while a collective request on `base` is unfinished: a shape's duplication, an
  /// agreement or a count exchange that some rank has not joined. MPI cannot withdraw one, and
  /// Open MPI may still progress it, so `base` must outlive it: it is never freed then.
  [[nodiscard]] bool holds_unfinished_requests() const noexcept;

 private:
  struct Agreement;
  struct CountCheck;
  struct Shape;
  struct Queued;

  MPI_Comm find_ready(const CallRecord& shape) noexcept;
  Shape& shape_for(const CallRecord& record, const ErrorContext& where);
  /// True once `shape`'s communicator exists and its first call is agreed; throws the
  /// disagreement (every time it is asked) if the ranks disagreed.
  bool settle(Shape& shape);
  /// Forgets shapes whose agreement failed, once nothing queued refers to them.
  void forget_failed_shapes();

  MPI_Comm base_;
  int size_;
  std::shared_ptr<FatalState> fatal_;
  const RankProcesses* processes_;
  const MpiTimeoutReports* reports_;
  Post post_;
  std::vector<std::unique_ptr<Shape>> shapes_;
  CallRecord last_shape_;  ///< the shape of the latest call posted at once, and its communicator
  MPI_Comm last_comm_ = MPI_COMM_NULL;
  Shape* overflow_ = nullptr;
  std::deque<Queued> queue_;
};

/// The work of a queued native collective: it drains the queue as it is tested and, once its
/// call is posted, is the posted collective's.
class DeferredNative final : public WorkState {
 public:
  DeferredNative(MpiNativeShapes& shapes, const CallRecord& record, ErrorContext where,
                 std::shared_ptr<FatalState> fatal)
      : shapes_(shapes), record_(record), where_(std::move(where)), fatal_(std::move(fatal)) {}

  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// It marks the communicator fatal itself when it times out; the posted collective likewise.
  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& /*fatal*/) override { return true; }

  /// Called by the queue: the call is posted, or could not be.
  void posted(std::shared_ptr<WorkState> state) { posted_ = std::move(state); }
  void failed(std::exception_ptr error) { error_ = std::move(error); }

 private:
  /// Drains the queue unless this call is already settled; true once it is posted.
  bool settled();

  MpiNativeShapes& shapes_;  // the backend's, which outlives its works
  CallRecord record_;
  ErrorContext where_;
  std::shared_ptr<FatalState> fatal_;
  LivenessSchedule liveness_;
  std::shared_ptr<WorkState> posted_;
  std::exception_ptr error_;
};

}  // namespace meshcomm::detail
