// The `eager` algorithm of every collective with equal contributions: ranks on one host publish
// their inputs into shared slots (EagerMailbox) and each computes its output from the peers'.
// For small calls: a call whose peers have all arrived completes inside the call.

#include <exception>

#include <fmt/format.h>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "collective_engine.hpp"
#include "communicator_impl.hpp"
#include "eager_all_to_allv.hpp"
#include "eager_mailbox.hpp"
#include "meshcomm/error.hpp"
#include "process_liveness.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

namespace {

/// The eager operations of one call not finished inside it (one, or a broadcast's pieces):
/// finished by testing them in order (or any later one). A failure makes the communicator fatal
/// itself, so that the call needs no wrapper (and its allocation) that does.
class EagerWorkState final : public WorkState {
 public:
  /// `operation` names the call in errors ("all_gather", "barrier"): static text.
  EagerWorkState(CommunicatorImpl& comm, std::shared_ptr<EagerMailbox> mailbox, EagerMailbox::Operations ops,
                 std::string_view operation, OperationLabel label)
      : comm_(comm), mailbox_(std::move(mailbox)), op_(ops.first), last_op_(ops.last), operation_(operation),
        label_(label) {}
  EagerWorkState(CommunicatorImpl& comm, std::shared_ptr<EagerMailbox> mailbox, std::int64_t op,
                 std::string_view operation, OperationLabel label)
      : EagerWorkState(comm, std::move(mailbox), {.first = op, .last = op}, operation, label) {}

  bool test() override {
    try {
      while (mailbox_->finished(op_)) {
        if (op_ == last_op_) return true;
        ++op_;
      }
    } catch (const Error& error) {
      fail_communicator(error);
      throw;
    }
    // A rank whose process has ended never arrives: fail now, naming it, not at the timeout.
    if (liveness_.due()) {
      if (auto failure = mailbox_->failure_of_ended_peers(op_, comm_.context(label_), operation_)) {
        fail_communicator(*failure);
        throw *failure;
      }
    }
    return false;
  }

  void wait_until(Clock::time_point deadline) override {
    if (poll_until([this] { return test(); }, deadline)) return;  // test() fails the communicator itself
    const auto ranks = mailbox_->waiting_for(op_);
    Error timeout(ErrorCode::timeout,
                  fmt::format("eager {} did not finish in time: rank(s) {} have not reached it or an eager collective "
                              "before it on this communicator, or not read what this rank left for them in its "
                              "buffer; every rank must make the same collective calls in the same order",
                              operation_, fmt::join(ranks, ", ")),
                  comm_.context(label_, ranks.empty() ? -1 : ranks.front()));
    fail_communicator(timeout);
    throw timeout;
  }

  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& /*fatal*/) override { return true; }

 private:
  /// A collective that failed part-way leaves the ranks out of step (docs/errors.md).
  void fail_communicator(const Error& error) { comm_.backend().fatal_state()->set(error); }

  CommunicatorImpl& comm_;
  std::shared_ptr<EagerMailbox> mailbox_;
  std::int64_t op_;  ///< the first operation not yet seen finished
  std::int64_t last_op_;
  std::string_view operation_;
  OperationLabel label_;
  LivenessSchedule liveness_;
};

template <CollectiveKind Kind>
class EagerCollective final : public AlgorithmOf<Kind> {
 public:
  EagerCollective() : AlgorithmOf<Kind>("eager", /*takes_tags=*/false) {}

  std::string unsupported_reason(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    if (comm.eager_mailbox() == nullptr) {
      return fmt::format("it needs 2 to {} ranks on one host, on the mpi, ucx or inproc backend, with shared memory",
                         EagerMailbox::kMaxRanks);
    }
    if (args.input.memory != MemoryKind::host || args.output.memory != MemoryKind::host) {
      return "it moves host memory only";
    }
    if (!comm.eager_mailbox()->takes(args)) {
      return fmt::format("each rank would publish {} bytes, more than the {} its slots hold, and not every peer "
                         "reads them from its buffer",
                         comm.eager_mailbox()->published_bytes(args), EagerMailbox::kPayloadBytes);
    }
    return {};
  }

  bool runs(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    return comm.eager_mailbox() != nullptr && args.input.memory == MemoryKind::host &&
           args.output.memory == MemoryKind::host && comm.eager_mailbox()->takes(args);
  }

  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    return start_eager(comm, args, CallRecord::of(args), nullptr);
  }

  /// The all-reduce, and the all-to-all in place, take over a call on plain buffers from the shm
  /// path, which has reserved it as the call started (selection.cpp says where that pays).
  bool takes_over_in_slots() const noexcept override {
    return Kind == CollectiveKind::all_reduce || Kind == CollectiveKind::all_to_all;
  }

  std::shared_ptr<WorkState> start_in_slots_if(CommunicatorImpl& comm, const CollectiveArgs& args,
                                               std::function<bool()> runs) const override {
    const auto& mailbox = comm.eager_mailbox();
    const auto record = CallRecord::of(args);
    return make_recycled<EagerWorkState>(comm, mailbox, mailbox->start_if(args, record, std::move(runs)),
                                         record.operation(), args.label);
  }
};

/// An eager all_to_allv not finished inside its call: its eager operation, then, where that was
/// handed over, the takeover's, on the tags reserved for it and the layout kept from the call.
/// A takeover started while the eager operation still waits for peers' tables runs beside it:
/// pairwise's later steps need not wait for the last rank to publish its table.
class EagerAllToAllvState final : public WorkState {
 public:
  EagerAllToAllvState(CommunicatorImpl& comm, std::int64_t op, const CollectiveArgs& args, const Algorithm& takeover,
                      int tag)
      : comm_(comm), eager_(comm, comm.eager_mailbox(), op, "all_to_allv", args.label), op_(op), args_(args),
        takeover_(takeover), tag_(tag) {
    args_.layout = copy_layout(args.layout, layout_);
    // A rank whose own blocks did not fit, or that expects some rank's not to, starts the
    // takeover at once, beside its eager operation, whose table still lets a pair that disagrees
    // fail.
    if (comm.eager_mailbox()->hands_over_at_once(op, args)) take_over();
  }

  bool test() override {
    if (!eager_finished_) {
      // The takeover's error waits for the eager part: where a pair disagrees about a count, the
      // tables' error, which names both counts, is the call's, though pairwise saw it first.
      const bool eager_finished = eager_.test();
      if (taken_over_state_ && !takeover_error_) {
        try {
          test_takeover();
        } catch (const Error&) {
          takeover_error_ = std::current_exception();
        }
      }
      if (!eager_finished) return false;
      eager_finished_ = true;
      if (takeover_error_) std::rethrow_exception(takeover_error_);
      if (comm_.eager_mailbox()->take_handed_over(op_) && !taken_over_) take_over();
    }
    return taken_over_state_ == nullptr || test_takeover();
  }

  void wait_until(Clock::time_point deadline) override {
    // Both parts progress while the eager one waits for its peers; then the takeover waits its own way.
    if (!eager_finished_ && !poll_until([this] { return test() || eager_finished_; }, deadline)) {
      eager_.wait_until(deadline);  // past the deadline: its error names the late ranks
      test();
    }
    if (taken_over_state_ && !takeover_finished_) {
      fatal_on_error_.run([&] { taken_over_state_->wait_until(deadline); });
      takeover_finished_ = true;
    }
  }

  bool fail_communicator_on_error(const std::shared_ptr<FatalState>& fatal) override {
    fatal_on_error_.arm(fatal);
    return true;
  }

 private:
  CommunicatorImpl& comm_;
  EagerWorkState eager_;
  std::int64_t op_;
  CollectiveArgs args_;
  LayoutStorage layout_;  ///< args_.layout's counts and offsets: the caller's may be gone
  const Algorithm& takeover_;
  int tag_;
  bool eager_finished_ = false;
  bool taken_over_ = false;
  std::shared_ptr<WorkState> taken_over_state_;
  bool takeover_finished_ = false;
  std::exception_ptr takeover_error_;  ///< the takeover's, until the eager part has finished
  FatalOnError fatal_on_error_;

  /// Whether the takeover has finished; tests it until it has.
  bool test_takeover() {
    if (!takeover_finished_) takeover_finished_ = fatal_on_error_.run([&] { return taken_over_state_->test(); });
    return takeover_finished_;
  }

  /// Starts the takeover; its failures are the call's (the eager part fails the communicator
  /// itself).
  void take_over() {
    taken_over_ = true;
    taken_over_state_ = fatal_on_error_.run([&] { return takeover_.start_on_tags(comm_, args_, tag_); });
  }
};

/// all_to_allv through the eager slots (eager_all_to_allv.hpp): finished from them where every
/// rank's blocks fit its slot, else handed over, alike on every rank, to the algorithm the table
/// names next (pairwise), whose tags it reserves as the call starts (in call order, as tags
/// must be).
class EagerAllToAllv final : public AlgorithmOf<CollectiveKind::all_to_allv> {
 public:
  EagerAllToAllv() : AlgorithmOf("eager") {}

  std::string unsupported_reason(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    return eager_collective_.unsupported_reason(args, comm);
  }
  bool runs(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    return eager_collective_.runs(args, comm);
  }

  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const Algorithm& takeover = comm.collectives().takeover_for(comm, args, *this);
    const int tag = comm.reserve_internal_tags(takeover.takeover_tags());
    const std::int64_t op = comm.eager_mailbox()->start(args, CallRecord::of(args), nullptr);
    if (op < 0) return nullptr;  // finished inside the call, from the slots
    return make_recycled<EagerAllToAllvState>(comm, op, args, takeover, tag);
  }

 private:
  EagerCollective<CollectiveKind::all_to_allv> eager_collective_;  ///< whose conditions it shares
};

}  // namespace

std::shared_ptr<WorkState> start_eager(CommunicatorImpl& comm, const CollectiveArgs& args, const CallRecord& record,
                                       std::shared_ptr<const void> buffers) {
  const auto& mailbox = comm.eager_mailbox();
  if (EagerMailbox::in_pieces(args)) {
    const auto ops = mailbox->start_in_pieces(args, record, buffers);
    if (!ops) return nullptr;  // every piece finished inside the call
    return make_recycled<EagerWorkState>(comm, mailbox, *ops, record.operation(), args.label);
  }
  const std::int64_t op = mailbox->start(args, record, std::move(buffers));
  if (op < 0) return nullptr;  // finished inside the call
  return make_recycled<EagerWorkState>(comm, mailbox, op, record.operation(), args.label);
}

std::shared_ptr<WorkState> start_eager_barrier(CommunicatorImpl& comm, OperationLabel label, std::uint64_t call) {
  // An all-gather of nothing in the slots' terms: each rank publishes the barrier's record alone
  // and finishes once every peer has published it too, that is, has reached the barrier. The
  // record tells it from any collective a peer calls in its place. Zero bytes from and to a
  // valid address: nothing is read or written there.
  static std::byte nothing;
  const CollectiveArgs args{.kind = CollectiveKind::all_gather,
                            .input = {&nothing, 0, DataType::u8, MemoryKind::host},
                            .output = {&nothing, 0, DataType::u8, MemoryKind::host},
                            .label = label};
  return start_eager(comm, args, CallRecord::barrier(call), nullptr);
}

std::vector<std::unique_ptr<Algorithm>> make_eager_algorithms() {
  std::vector<std::unique_ptr<Algorithm>> eager;
  eager.push_back(std::make_unique<EagerCollective<CollectiveKind::all_gather>>());
  eager.push_back(std::make_unique<EagerCollective<CollectiveKind::reduce_scatter>>());
  eager.push_back(std::make_unique<EagerCollective<CollectiveKind::all_reduce>>());
  eager.push_back(std::make_unique<EagerCollective<CollectiveKind::all_to_all>>());
  eager.push_back(std::make_unique<EagerCollective<CollectiveKind::broadcast>>());
  eager.push_back(std::make_unique<EagerAllToAllv>());
  return eager;
}

}  // namespace meshcomm::detail
