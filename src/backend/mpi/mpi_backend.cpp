#include "mpi_backend.hpp"

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "host_cores.hpp"
#include "mpi_arrivals.hpp"
#include "mpi_check.hpp"
#include "patterns/collective_tags.hpp"
#include "mpi_operation.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

MPI_Comm duplicate_communicator(MPI_Comm comm, std::chrono::milliseconds timeout, const char* what,
                                const ErrorContext& where, const MpiArrivals* arrivals) {
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Comm_idup(comm, &copy, &request), "MPI_Comm_idup", where);
  MPI_Status status;
  if (!poll_request(request, status, deadline_after(timeout), where)) {
    // A collective request can be neither cancelled nor freed: it stays behind, unanswered.
    const auto who = arrivals != nullptr ? describe_arrivals(arrivals->missing(kArrivalListen))
                                         : "some rank of the communicator has not joined it (it may have failed an "
                                           "earlier step and left)";
    throw Error(ErrorCode::timeout,
                fmt::format("{} did not complete within {} ms: {}; no communicator was made", what, timeout.count(),
                            who),
                where);
  }
  return copy;
}

namespace {

/// Every rank's ProcessIdentity, in rank order: a nonblocking all-gather waited for at most
/// `timeout` (every rank has just joined a duplicate, so this normally takes microseconds). The
/// cores each process may run on travel with it: where this host's ranks outnumber its cores,
/// every wait of this process yields its core from its second poll and naps from its 4096th
/// (yield_when_idle), as Open MPI's own waits yield when its launcher says the node is
/// oversubscribed. A waiter that first spins 160 polls keeps a peer it waits for off the core:
/// at three ranks on two cores of the Zen 4 guest of perftests/README.md (2026-12-03, two
/// alternated pairs of launches, `{op}_perf -b 64 -e 8K -f 2 -n 5000 -w 200 --repeat 5`) the
/// all-to-all of 60-504 B ran 1.16-1.33x `mpi_best` out of place against 0.83-0.89x, and every
/// other small collective 1.6-2.2x against 1.1-1.5x; at 1-4 MiB the ratios stayed as they were.
RankProcesses exchange_process_identities(MPI_Comm comm, int size, std::chrono::milliseconds timeout,
                                          const ErrorContext& where) {
  struct Introduction {
    ProcessIdentity process;
    CoreSet cores;
  };
  const Introduction mine{.process = ProcessIdentity::of_this_process(), .cores = CoreSet::of_this_process()};
  std::vector<Introduction> all(static_cast<std::size_t>(size));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm, &request),
            "MPI_Iallgather", where);
  MPI_Status status;
  if (!poll_request(request, status, deadline_after(timeout), where)) {
    throw Error(ErrorCode::timeout,
                fmt::format("exchanging the ranks' process identities did not complete within {} ms: some rank has "
                            "left; no communicator was made",
                            timeout.count()),
                where);
  }
  std::vector<ProcessIdentity> processes;
  std::vector<CoreSet> host_cores;
  for (const auto& each : all) {
    processes.push_back(each.process);
    if (each.process.host == mine.process.host) host_cores.push_back(each.cores);
  }
  if (ranks_outnumber_cores(host_cores)) yield_when_idle();
  return RankProcesses(std::move(processes));
}

/// The process's hook into Open MPI's progress engine, made while some mpi backend lives. A probe
/// that matches nothing (MPI_COMM_SELF carries no meshcomm message) runs the engine once.
std::shared_ptr<ProgressHook> shared_progress_hook() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) return nullptr;
  static std::mutex mutex;
  static std::weak_ptr<ProgressHook> shared;
  std::lock_guard lock(mutex);
  if (auto existing = shared.lock()) return existing;
  auto made = std::make_shared<ProgressHook>([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    int matched = 0;
    (void)MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &matched, MPI_STATUS_IGNORE);
  });
  shared = made;
  return made;
}

}  // namespace

MpiBackend::MpiBackend(MPI_Comm user, std::chrono::milliseconds timeout) : user_(user), timeout_(timeout) {
  const ErrorContext where{.backend = "mpi", .operation = "create"};
  check_mpi(MPI_Comm_set_errhandler(user_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", where);
  check_mpi(MPI_Comm_rank(user_, &rank_), "MPI_Comm_rank", where);
  check_mpi(MPI_Comm_size(user_, &size_), "MPI_Comm_size", where);
  internal_ = duplicate_communicator(user_, timeout_, "duplicating the communicator for meshcomm's own messages",
                                     {.backend = "mpi", .operation = "create", .rank = rank_});
  // MPI attaches the tag bound to MPI_COMM_WORLD and it holds for every communicator; Open MPI
  // does not repeat it on communicators made by MPI_Comm_split.
  for (MPI_Comm holder : {user_, MPI_COMM_WORLD}) {
    int* upper_bound = nullptr;
    int found = 0;
    MPI_Comm_get_attr(holder, MPI_TAG_UB, &upper_bound, &found);
    if (found != 0 && upper_bound != nullptr) {
      max_tag_ = std::min(*upper_bound, (1 << 30) - 1);
      break;
    }
  }
  processes_ = exchange_process_identities(internal_, size_, timeout_,
                                           {.backend = "mpi", .operation = "create", .rank = rank_});
  timeout_reports_ =
      std::make_unique<MpiTimeoutReports>(internal_, CollectiveTags::reserved(max_tag_), rank_, size_);
  native_shapes_ = std::make_unique<MpiNativeShapes>(
      internal_, size_, fatal_state(), &processes_, timeout_reports_.get(),
      [this](const CollectiveArgs& args, MPI_Comm comm) { return post_native(args, comm); });
  progress_hook_ = shared_progress_hook();
}

MpiBackend::~MpiBackend() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Open MPI frees a communicator locally; nothing here waits on other ranks. But it may still
  // progress a collective request that a rank never joined after its communicator is freed, and
  // then reads freed memory: a communicator that carries one is left behind, never freed.
  const bool internal_carries_unfinished = native_shapes_->holds_unfinished_requests();
  native_shapes_.reset();
  if (internal_ != MPI_COMM_NULL && !internal_carries_unfinished) MPI_Comm_free(&internal_);
  if (user_ != MPI_COMM_NULL && !user_carries_unfinished_) MPI_Comm_free(&user_);
}

namespace {

/// Sends up to this size are tested once as they are posted: Open MPI's shared-memory transport
/// completes a send inside MPI_Isend up to its inline size (btl_vader_max_inline_send, 256 bytes).
/// A larger eager send (to 4 KiB) completes only once the receiver hands its fragment back, so a
/// test there always failed (200 of 200 tries at 512 B-4 KiB, Open MPI 4.1.4) and cost ~400
/// instructions of progress for nothing.
constexpr std::size_t kInlineSendBytes = 256;

/// Starts `operation`'s pieces over `bytes` bytes at `base`; `start_piece(pointer, count)`
/// posts one piece and returns its request.
template <class StartPiece>
std::shared_ptr<WorkState> start_in_pieces(std::shared_ptr<MpiOperation> operation, std::byte* base,
                                           std::size_t bytes, StartPiece start_piece) {
  std::size_t offset = 0;
  do {
    const std::size_t piece = std::min(bytes - offset, kMpiMaxPiece);
    operation->add_piece(start_piece(base + offset, static_cast<int>(piece)), piece);
    offset += piece;
  } while (offset < bytes);
  return operation;
}

}  // namespace

std::shared_ptr<WorkState> MpiBackend::isend(ConstBufferView data, int peer, int tag, Lane lane,
                                             OperationLabel label, StreamRef) {
  const auto where = call_site(label, peer);
  // MPI_Isend only reads through the pointer.
  auto* base = static_cast<std::byte*>(const_cast<void*>(data.data));
  MPI_Request small = MPI_REQUEST_NULL;
  if (data.bytes() <= kInlineSendBytes) {
    // Open MPI copies a small message out inside MPI_Isend: such a send costs no operation.
    check_mpi(MPI_Isend(base, static_cast<int>(data.bytes()), MPI_BYTE, peer, tag, comm(lane), &small), "MPI_Isend",
              where);
    int done = 0;
    check_mpi(MPI_Test(&small, &done, MPI_STATUS_IGNORE), "MPI_Test", where);
    if (done != 0) return nullptr;
  }
  auto operation = make_recycled<MpiOperation>(
      MpiOperation::Description{.is_send = true, .peer = peer, .tag = tag, .bytes = data.bytes(), .site = where,
                                .processes = &processes_, .comm = collective_comm(lane)},
      fatal_state());
  if (small != MPI_REQUEST_NULL) {
    operation->add_piece(small, data.bytes());
    return operation;
  }
  return start_in_pieces(std::move(operation), base, data.bytes(), [&](std::byte* pointer, int count) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(pointer, count, MPI_BYTE, peer, tag, comm(lane), &request), "MPI_Isend", where);
    return request;
  });
}

std::shared_ptr<WorkState> MpiBackend::irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                             StreamRef) {
  const auto where = call_site(label, peer);
  auto operation = make_recycled<MpiOperation>(
      MpiOperation::Description{.is_send = false, .peer = peer, .tag = tag, .bytes = data.bytes(), .site = where,
                                .processes = &processes_, .comm = collective_comm(lane)},
      fatal_state());
  return start_in_pieces(std::move(operation), static_cast<std::byte*>(data.data), data.bytes(),
                         [&](std::byte* pointer, int count) {
                           MPI_Request request = MPI_REQUEST_NULL;
                           check_mpi(MPI_Irecv(pointer, count, MPI_BYTE, peer, tag, comm(lane), &request), "MPI_Irecv",
                                     where);
                           return request;
                         });
}

std::unique_ptr<Backend> MpiBackend::split(std::span<const int> members, int color, std::uint64_t) {
  const auto me = std::find(members.begin(), members.end(), rank_);
  const int new_rank = static_cast<int>(me - members.begin());
  const ErrorContext where{.backend = "mpi", .operation = "split", .rank = rank_};
  // MPI_Comm_split blocks until every rank calls it. A rank that gave up on this split earlier
  // (its exchange timed out) never will, yet a late rank can still complete that exchange against
  // its leftover messages: a duplicate made with a timeout first shows that every rank got here.
  const MpiArrivals arrivals(user_);
  arrivals.announce();
  MPI_Comm agreed = MPI_COMM_NULL;
  try {
    agreed = duplicate_communicator(user_, timeout_, "agreeing that every rank reached the split", where, &arrivals);
  } catch (const Error&) {
    user_carries_unfinished_ = true;
    throw;
  }
  MPI_Comm child = MPI_COMM_NULL;
  const int code = MPI_Comm_split(agreed, color, new_rank, &child);
  MPI_Comm_free(&agreed);
  check_mpi(code, "MPI_Comm_split", where);
  return std::make_unique<MpiBackend>(child, timeout_);
}

std::unique_ptr<Backend> make_mpi_backend(MPI_Comm comm, std::chrono::milliseconds timeout) {
  // MPI cannot say who never joined its collective; the launcher's PMIx server can.
  const MpiArrivals arrivals(comm);
  arrivals.announce();
  const MPI_Comm user = duplicate_communicator(comm, timeout, "duplicating the bootstrap's communicator",
                                               {.backend = "mpi", .operation = "create"}, &arrivals);
  return std::make_unique<MpiBackend>(user, timeout);
}

}  // namespace meshcomm::detail
