#include "mpi_native_shapes.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "mpi_check.hpp"

namespace meshcomm::detail {

namespace {

/// Tests a request until `done` (kept by the caller, since MPI nulls the request once complete).
bool test_until_done(MPI_Request& request, bool& done, const ErrorContext& where) {
  if (!done) {
    int flag = 0;
    check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test", where);
    done = flag != 0;
  }
  return done;
}

}  // namespace

/// The exchange of what every rank is calling, posted as a nonblocking all-gather; its buffers
/// stay put until it completes.
struct MpiNativeShapes::Agreement {
  CallRecord mine;
  std::vector<CallRecord> all;
  ErrorContext where;
  MPI_Request request = MPI_REQUEST_NULL;
  bool done = false;

  Agreement(MPI_Comm comm, const CallRecord& record, int size, ErrorContext context)
      : mine(record), all(static_cast<std::size_t>(size)), where(std::move(context)) {
    check_mpi(MPI_Iallgather(&mine, sizeof(CallRecord), MPI_BYTE, all.data(), sizeof(CallRecord), MPI_BYTE, comm,
                             &request),
              "MPI_Iallgather", where);
  }

  /// True once every rank's record is here; throws Error(invalid_argument) listing each rank's
  /// call if they disagree.
  bool complete() {
    if (!test_until_done(request, done, where)) return false;
    throw_if_disagreeing(all, where);
    return true;
  }
};

/// The exchange of an all_to_allv's pair counts: each rank tells each peer how many bytes it
/// sends it and expects from it, so that a pair that disagrees is an error on both sides before
/// Open MPI sees it (Open MPI aborts the job on the truncation that would follow).
struct MpiNativeShapes::CountCheck {
  std::vector<std::uint64_t> mine;    ///< per peer: bytes sent to it, bytes expected from it
  std::vector<std::uint64_t> theirs;  ///< per peer: bytes it sends here, bytes it expects from here
  ErrorContext where;
  MPI_Request request = MPI_REQUEST_NULL;
  bool done = false;

  CountCheck(MPI_Comm comm, const CollectiveArgs& args, int size, ErrorContext context)
      : mine(2 * static_cast<std::size_t>(size)), theirs(mine.size()), where(std::move(context)) {
    const std::size_t element = size_of(args.input.type);
    for (std::size_t peer = 0; peer < static_cast<std::size_t>(size); ++peer) {
      mine[2 * peer] = args.layout.send_counts[peer] * element;
      mine[2 * peer + 1] = args.layout.recv_counts[peer] * element;
    }
    check_mpi(MPI_Ialltoall(mine.data(), 2, MPI_UINT64_T, theirs.data(), 2, MPI_UINT64_T, comm, &request),
              "MPI_Ialltoall", where);
  }

  /// True once every peer's counts are here; throws Error(size_mismatch) naming the first pair
  /// whose counts disagree, on both ranks of the pair.
  bool complete() {
    if (!test_until_done(request, done, where)) return false;
    for (std::size_t peer = 0; peer < mine.size() / 2; ++peer) {
      const auto sends_here = theirs[2 * peer], expects_from_here = theirs[2 * peer + 1];
      const auto sent = mine[2 * peer], expected = mine[2 * peer + 1];
      if (sends_here == expected && expects_from_here == sent) continue;
      auto context = where;
      context.peer = static_cast<int>(peer);
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("all_to_allv: this rank ({}) and rank {} disagree about what they exchange: rank {} "
                              "sends {} bytes here and expects {}, where this rank expects {} from it and sends {}; "
                              "each pair's send and receive counts must match",
                              where.rank, peer, peer, sends_here, expects_from_here, expected, sent),
                  context);
    }
    return true;
  }
};

/// One shape's communicator, made by a nonblocking duplication, and the agreement of its first
/// call (none for the shared communicator past kMaxShapes, whose every call is agreed).
struct MpiNativeShapes::Shape {
  CallRecord shape;
  ErrorContext where;  ///< of the call that made it
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request duplication = MPI_REQUEST_NULL;
  std::unique_ptr<Agreement> first_call;
  std::exception_ptr disagreement;
  bool ready = false;
  bool overflow = false;
};

/// A call waiting to be posted.
struct MpiNativeShapes::Queued {
  std::shared_ptr<DeferredNative> work;
  Shape* shape = nullptr;
  CollectiveArgs args;
  ErrorContext where;
  /// all_to_allv's counts and offsets, copied: the caller's may be gone when the call is posted.
  LayoutStorage layout;
  /// The agreement of this very call (calls on the shared communicator past kMaxShapes).
  std::unique_ptr<Agreement> own;
  /// all_to_allv: the exchange of its pair counts.
  std::unique_ptr<CountCheck> counts;
};

MpiNativeShapes::MpiNativeShapes(MPI_Comm base, int size, std::shared_ptr<FatalState> fatal,
                                 const RankProcesses* processes, const MpiTimeoutReports* reports, Post post)
    : base_(base),
      size_(size),
      fatal_(std::move(fatal)),
      processes_(processes),
      reports_(reports),
      post_(std::move(post)) {}

MpiNativeShapes::~MpiNativeShapes() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Requests MPI still holds (a rank never joined) keep their buffers and communicators: those
  // are left behind. A fatal communicator may have left a native collective on a shape's.
  const bool keep_communicators = finalized != 0 || fatal_->is_set() || holds_unfinished_requests();
  auto leave_pending = [](std::unique_ptr<Agreement>& agreement) {
    if (agreement != nullptr && !agreement->done) (void)agreement.release();
  };
  for (auto& item : queue_) {
    leave_pending(item.own);
    if (item.counts != nullptr && !item.counts->done) (void)item.counts.release();
  }
  for (auto& shape : shapes_) {
    leave_pending(shape->first_call);
    const bool duplicated = shape->duplication == MPI_REQUEST_NULL;
    if (!keep_communicators && duplicated && shape->comm != MPI_COMM_NULL) MPI_Comm_free(&shape->comm);
  }
}

bool MpiNativeShapes::holds_unfinished_requests() const noexcept {
  auto unfinished = [](const auto& exchange) { return exchange != nullptr && !exchange->done; };
  for (const auto& item : queue_) {
    if (unfinished(item.own) || unfinished(item.counts)) return true;
  }
  for (const auto& shape : shapes_) {
    if (shape->duplication != MPI_REQUEST_NULL || unfinished(shape->first_call)) return true;
  }
  return false;
}

MPI_Comm MpiNativeShapes::find_ready(const CallRecord& shape) noexcept {
  for (auto& candidate : shapes_) {
    if (candidate->ready && !candidate->overflow && candidate->shape == shape) {
      last_shape_ = shape;
      last_comm_ = candidate->comm;
      return last_comm_;
    }
  }
  return MPI_COMM_NULL;
}

MpiNativeShapes::Shape& MpiNativeShapes::shape_for(const CallRecord& record, const ErrorContext& where) {
  const CallRecord key = record.shape();
  std::size_t own_shapes = 0;
  for (auto& candidate : shapes_) {
    if (candidate->overflow) continue;
    ++own_shapes;
    if (!candidate->disagreement && candidate->shape == key) return *candidate;
  }
  if (own_shapes >= kMaxShapes && overflow_ != nullptr) return *overflow_;
  auto shape = std::make_unique<Shape>();
  shape->shape = key;
  shape->where = where;
  shape->overflow = own_shapes >= kMaxShapes;
  if (!shape->overflow) shape->first_call = std::make_unique<Agreement>(base_, record, size_, where);
  check_mpi(MPI_Comm_idup(base_, &shape->comm, &shape->duplication), "MPI_Comm_idup", where);
  if (shape->overflow) overflow_ = shape.get();
  shapes_.push_back(std::move(shape));
  return *shapes_.back();
}

std::shared_ptr<WorkState> MpiNativeShapes::defer(const CollectiveArgs& args, const ErrorContext& where) {
  const CallRecord record = CallRecord::of(args);
  Shape& shape = shape_for(record, where);
  Queued item{.work = std::make_shared<DeferredNative>(*this, record, where, fatal_), .shape = &shape, .args = args,
              .where = where};
  if (args.kind == CollectiveKind::all_to_allv) item.args.layout = copy_layout(args.layout, item.layout);
  if (shape.overflow) item.own = std::make_unique<Agreement>(base_, record, size_, where);
  if (args.kind == CollectiveKind::all_to_allv) item.counts = std::make_unique<CountCheck>(base_, item.args, size_, where);
  auto work = item.work;
  queue_.push_back(std::move(item));
  drain();
  return work;
}

bool MpiNativeShapes::settle(Shape& shape) {
  if (shape.ready) return true;
  if (shape.disagreement) std::rethrow_exception(shape.disagreement);
  int duplicated = 0;
  check_mpi(MPI_Test(&shape.duplication, &duplicated, MPI_STATUS_IGNORE), "MPI_Test", shape.where);
  if (duplicated == 0) return false;
  if (shape.first_call != nullptr) {
    try {
      if (!shape.first_call->complete()) return false;
    } catch (const Error&) {
      shape.disagreement = std::current_exception();
      MPI_Comm_free(&shape.comm);
      throw;
    }
  }
  shape.ready = true;
  return true;
}

void MpiNativeShapes::drain() {
  while (!queue_.empty()) {
    auto& item = queue_.front();
    try {
      if (fatal_->is_set()) throw fatal_->aborted_error(item.where, "this collective was never started");
      if (!settle(*item.shape)) return;
      if (item.own != nullptr && !item.own->complete()) return;
      if (item.counts != nullptr && !item.counts->complete()) return;
      item.work->posted(post_(item.args, item.shape->comm));
    } catch (const Error&) {
      item.work->failed(std::current_exception());
    }
    queue_.pop_front();
  }
  forget_failed_shapes();
}

void MpiNativeShapes::forget_failed_shapes() {
  // A shape that failed never became ready, so it was never the last one posted at once.
  std::erase_if(shapes_, [](const auto& shape) { return shape->disagreement != nullptr; });
}

bool DeferredNative::settled() {
  if (posted_ == nullptr && error_ == nullptr) shapes_.drain();
  if (error_) std::rethrow_exception(error_);
  if (posted_ != nullptr) return true;
  if (const auto* processes = shapes_.processes(); processes != nullptr && liveness_.due()) {
    if (const auto ended = processes->ended_except(where_.rank); !ended.empty()) {
      const Error error = processes->failure(
          ended, where_,
          fmt::format("MPI's {} can never be started; the communicator cannot be used again", where_.operation));
      fatal_->set(error);
      throw error;
    }
  }
  return false;
}

bool DeferredNative::test() { return settled() && posted_->test(); }

void DeferredNative::wait_until(Clock::time_point deadline) {
  const auto waiting = deadline - Clock::now();
  if (!poll_until([this] { return settled(); }, deadline)) {
    auto context = where_;
    std::string where_the_others_are = "a rank has not made this call, or made another";
    if (const auto* reports = shapes_.reports()) {
      where_the_others_are = reports->exchange(record_, report_listen_after(waiting), context.peer);
    }
    Error error(ErrorCode::timeout,
                fmt::format("MPI's {} ({}) was never started: it waits for the ranks to agree on the first call of its "
                            "shape (or on a call queued before it), and not every rank joined in time: {}; the "
                            "communicator cannot be used again",
                            where_.operation, record_.describe(), where_the_others_are),
                context);
    fatal_->set(error);
    throw error;
  }
  posted_->wait_until(deadline);
}

}  // namespace meshcomm::detail
