#include "nccl_channel.hpp"

#include <cstring>

#include <fmt/format.h>

#include "device/cuda_check.hpp"
#include "environment.hpp"
#include "hot_path.hpp"
#include "meshcomm/bootstrap.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

namespace {

/// Nonblocking unless MESHCOMM_NCCL_BLOCKING=1: every call returns at once and settle() waits
/// for it against the timeout.
ncclConfig_t channel_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = environment_variable("MESHCOMM_NCCL_BLOCKING").value_or("0") == "1" ? 1 : 0;
  return config;
}

Error nccl_error(ncclResult_t result, const char* what, const char* detail, const ErrorContext& context) {
  return Error(ErrorCode::backend_failure,
               fmt::format("NCCL {} failed: {}{}{}", what, ncclGetErrorString(result),
                           detail != nullptr && detail[0] != '\0' ? ": " : "", detail != nullptr ? detail : ""),
               context);
}

}  // namespace

NcclChannel::NcclChannel(ncclComm_t comm, std::chrono::milliseconds timeout, std::shared_ptr<FatalState> fatal)
    : comm_(comm), timeout_(timeout), fatal_(std::move(fatal)) {
  device::check_cuda(cudaStreamCreateWithFlags(&internal_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

std::shared_ptr<NcclChannel> NcclChannel::create(Bootstrap& bootstrap, std::chrono::milliseconds timeout,
                                                 std::shared_ptr<FatalState> fatal) {
  const ErrorContext context{.backend = "nccl", .operation = "Communicator::create", .rank = bootstrap.rank()};
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) {
    if (auto result = ncclGetUniqueId(&id); result != ncclSuccess) {
      throw nccl_error(result, "ncclGetUniqueId", nullptr, context);
    }
  }
  // Rank 0's id reaches every rank; the bootstrap's exchange has its own timeout.
  const auto all = bootstrap.all_gather(std::as_bytes(std::span(&id, 1)));
  std::memcpy(&id, all.data(), sizeof(id));
  ncclComm_t comm = nullptr;
  ncclConfig_t config = channel_config();
  const ncclResult_t result = ncclCommInitRankConfig(&comm, bootstrap.size(), id, bootstrap.rank(), &config);
  if (result != ncclSuccess && result != ncclInProgress) {
    if (comm != nullptr) (void)ncclCommAbort(comm);
    throw nccl_error(result, "ncclCommInitRankConfig", comm != nullptr ? ncclGetLastError(comm) : nullptr, context);
  }
  std::shared_ptr<NcclChannel> channel(new NcclChannel(comm, timeout, std::move(fatal)));
  std::lock_guard lock(channel->mutex_);
  channel->settle("ncclCommInitRankConfig (every rank must create the communicator)", context);
  return channel;
}

std::shared_ptr<NcclChannel> NcclChannel::split(int color, int key, std::shared_ptr<FatalState> fatal) {
  const ErrorContext context{.backend = "nccl", .operation = "split"};
  std::lock_guard lock(mutex_);
  flush_locked();
  ncclComm_t child = nullptr;
  ncclConfig_t config = channel_config();
  check(ncclCommSplit(comm_, color, key, &child, &config), "ncclCommSplit", context);
  settle("ncclCommSplit (every rank must split)", context);
  std::shared_ptr<NcclChannel> channel(new NcclChannel(child, timeout_, std::move(fatal)));
  std::lock_guard child_lock(channel->mutex_);
  channel->settle("ncclCommSplit (the new communicator)", context);
  return channel;
}

NcclChannel::~NcclChannel() {
  if (!aborted_) {
    // Finalize flushes NCCL's outstanding work; if it cannot within the timeout, abort instead
    // of hanging in the destructor.
    const ncclResult_t finalize = ncclCommFinalize(comm_);
    ncclResult_t state = finalize == ncclSuccess || finalize == ncclInProgress ? ncclInProgress : finalize;
    const auto deadline = deadline_after(timeout_);
    for (unsigned spins = 0; state == ncclInProgress && Clock::now() < deadline; ++spins) {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
      if (state == ncclInProgress) backoff(spins);
    }
    if (state == ncclSuccess) {
      (void)ncclCommDestroy(comm_);
    } else {
      (void)ncclCommAbort(comm_);
    }
  }
  for (auto event : spare_events_) (void)cudaEventDestroy(event);
  if (internal_stream_ != nullptr) (void)cudaStreamDestroy(internal_stream_);
}

void NcclChannel::check(ncclResult_t result, const char* what, const ErrorContext& context) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  abort_locked(nccl_error(result, what, ncclGetLastError(comm_), context));
}

void NcclChannel::settle(const char* what, const ErrorContext& context) {
  const auto deadline = deadline_after(timeout_);
  for (unsigned spins = 0;; ++spins) {
    abort_if_fatal_locked(context);
    ncclResult_t state = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
    if (query != ncclSuccess) abort_locked(nccl_error(query, "ncclCommGetAsyncError", nullptr, context));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) abort_locked(nccl_error(state, what, ncclGetLastError(comm_), context));
    if (Clock::now() >= deadline) {
      abort_locked(Error(ErrorCode::timeout,
                         fmt::format("NCCL {} did not finish within {} ms; a rank may have failed or not made the "
                                     "same call",
                                     what, timeout_.count()),
                         context));
    }
    backoff(spins);
  }
}

void NcclChannel::abort_comm_locked(const Error& why) noexcept {
  fatal_->set(why);
  if (!aborted_) {
    aborted_ = true;
    (void)ncclCommAbort(comm_);
  }
  auto queued = std::move(queued_);
  queued_.clear();
  for (auto& item : queued) item.work->failed(std::make_exception_ptr(why));
}

void NcclChannel::abort_locked(const Error& cause) {
  const Error why(cause.code(), cause.message() + "; the NCCL communicator was aborted: create a new communicator",
                  cause.context());
  abort_comm_locked(why);
  throw why;
}

void NcclChannel::abort_if_fatal_locked(const ErrorContext& context) {
  if (!aborted_ && fatal_->is_set()) [[unlikely]] abort_locked(fatal_->aborted_error(context, {}));
}

void NcclChannel::abort_soon(const Error& cause) noexcept {
  if (!mutex_.try_lock()) return;  // the holder polls the fatal state and aborts
  std::lock_guard lock(mutex_, std::adopt_lock);
  try {
    abort_comm_locked(Error(cause.code(), cause.message() + "; the NCCL communicator was aborted", cause.context()));
  } catch (...) {
    // Building the message can only fail to allocate; the fatal state is already set.
  }
}

void NcclChannel::abort_with(const Error& cause) {
  std::lock_guard lock(mutex_);
  abort_locked(cause);
}

void NcclChannel::check_async(const NcclCallSite& site) {
  std::lock_guard lock(mutex_);
  if (aborted_) fatal_->throw_if_set(site.label.name);
  abort_if_fatal_locked(site.context());
  ncclResult_t state = ncclSuccess;
  const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
  if (query != ncclSuccess) abort_locked(nccl_error(query, "ncclCommGetAsyncError", nullptr, site.context()));
  if (state != ncclSuccess && state != ncclInProgress) {
    abort_locked(nccl_error(state, "asynchronous operation", ncclGetLastError(comm_), site.context()));
  }
}

cudaEvent_t NcclChannel::take_event() {
  if (!spare_events_.empty()) {
    auto event = spare_events_.back();
    spare_events_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  device::check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  return event;
}

cudaEvent_t NcclChannel::record_event(cudaStream_t stream, const NcclWork* work) {
  std::lock_guard lock(mutex_);
  // Under the lock that enqueue() holds: a collective queued after this event cannot join `work`.
  if (open_collective_.lock().get() == work) open_collective_.reset();
  const cudaEvent_t event = take_event();
  const cudaError_t status = cudaEventRecord(event, stream);
  if (status != cudaSuccess) spare_events_.push_back(event);
  device::check_cuda(status, "cudaEventRecord");
  return event;
}

MESHCOMM_HOT std::shared_ptr<NcclWork> NcclChannel::collective_work_locked(cudaStream_t stream,
                                                                         const NcclCallSite& site) {
  if (auto open = open_collective_.lock(); open != nullptr && open->stream() == stream) {
    open->covers_another_call();
    return open;
  }
  auto work = std::make_shared<NcclWork>(shared_from_this(), site, stream);
  open_collective_ = work;
  return work;
}

void NcclChannel::recycle(cudaEvent_t event) noexcept {
  std::lock_guard lock(mutex_);
  spare_events_.push_back(event);
}

std::shared_ptr<NcclWork> NcclChannel::queue(bool is_send, void* data, std::size_t bytes, int peer,
                                             cudaStream_t stream, NcclCallSite site) {
  std::lock_guard lock(mutex_);
  if (aborted_) fatal_->throw_if_set(site.label.name);
  auto what = fmt::format("{} of {} bytes {} peer {}", is_send ? "send" : "receive", bytes, is_send ? "to" : "from",
                          peer);
  auto work = std::make_shared<NcclWork>(shared_from_this(), site, std::move(what));
  queued_.push_back({is_send, data, bytes, peer, stream, work});
  return work;
}

void NcclChannel::flush() {
  std::lock_guard lock(mutex_);
  flush_locked();
}

void NcclChannel::flush_locked() {
  if (queued_.empty()) return;
  const ErrorContext context{.backend = "nccl", .operation = "isend/irecv"};
  check(ncclGroupStart(), "ncclGroupStart", context);
  ncclResult_t first_error = ncclSuccess;
  for (const auto& item : queued_) {
    const ncclResult_t result = item.is_send ? ncclSend(item.data, item.bytes, ncclUint8, item.peer, comm_, item.stream)
                                             : ncclRecv(item.data, item.bytes, ncclUint8, item.peer, comm_, item.stream);
    if (first_error == ncclSuccess && result != ncclSuccess && result != ncclInProgress) first_error = result;
  }
  const ncclResult_t ended = ncclGroupEnd();
  check(first_error, "ncclSend/ncclRecv", context);
  check(ended, "ncclGroupEnd", context);
  if (ended == ncclInProgress) settle("group of sends and receives", context);
  auto queued = std::move(queued_);
  queued_.clear();
  for (auto& item : queued) {
    const cudaEvent_t event = take_event();
    if (const auto status = cudaEventRecord(event, item.stream); status != cudaSuccess) {
      spare_events_.push_back(event);
      device::check_cuda(status, "cudaEventRecord");
    }
    item.work->enqueued(event);
  }
}

void NcclChannel::before_enqueue_locked(const NcclCallSite& site) {
  if (aborted_) fatal_->throw_if_set(site.label.name);
  flush_locked();
}

void NcclChannel::after_enqueue_locked(ncclResult_t result, const NcclCallSite& site) {
  // ncclSuccess means the call is on the stream; ncclInProgress (nonblocking) that it gets
  // there in the background, which settle() waits for.
  if (result == ncclSuccess) return;
  check(result, site.label.name, site.context());
  settle(site.label.name, site.context());
}

}  // namespace meshcomm::detail
