#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "../backend.hpp"
#include "hot_path.hpp"
#include "spin_lock.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

class NcclWork;

/// One NCCL communicator and what is queued on it. Point-to-point calls are queued and enqueued
/// together as one NCCL group at the next flush (NCCL needs a pair's sends and receives grouped,
/// or both sides block), which happens when any of its works is tested or waited on, or before
/// a collective. Every call that NCCL may leave in progress is awaited against the timeout, and
/// a timeout or an asynchronous error aborts the communicator, so nothing hangs.
class NcclChannel : public std::enable_shared_from_this<NcclChannel> {
 public:
  /// Joins the communicator of the bootstrap's ranks; rank 0's unique id travels through it.
  static std::shared_ptr<NcclChannel> create(Bootstrap& bootstrap, std::chrono::milliseconds timeout,
                                             std::shared_ptr<FatalState> fatal);
  /// The communicator of this rank's group in a split (collective over this channel's ranks).
  std::shared_ptr<NcclChannel> split(int color, int key, std::shared_ptr<FatalState> fatal);

  NcclChannel(const NcclChannel&) = delete;
  NcclChannel& operator=(const NcclChannel&) = delete;
  ~NcclChannel();

  /// Queues a send (or receive) of `bytes` bytes with `peer` on `stream`.
  std::shared_ptr<NcclWork> queue(bool is_send, void* data, std::size_t bytes, int peer, cudaStream_t stream,
                                  NcclCallSite site);

  /// Enqueues what is queued as one NCCL group.
  void flush();

  /// Flushes, then runs `calls(comm)` (NCCL calls on the communicator, grouped by the caller if
  /// need be, returning NCCL's result) and returns a work that completes when `stream` has run
  /// them. A template, so that the per-call path makes no call of its own beyond NCCL's.
  template <class Calls>
  MESHCOMM_HOT std::shared_ptr<NcclWork> enqueue(cudaStream_t stream, NcclCallSite site, Calls&& calls) {
    std::lock_guard lock(mutex_);
    if (aborted_ || !queued_.empty()) before_enqueue_locked(site);
    if (const ncclResult_t result = calls(comm_); result != ncclSuccess) after_enqueue_locked(result, site);
    return collective_work_locked(stream, site);
  }

  /// Throws (after aborting) if NCCL reported an asynchronous error for this communicator.
  void check_async(const NcclCallSite& site);

  /// Aborts the communicator: every queued and later operation fails with `cause` (which is
  /// thrown, saying that the communicator was aborted).
  [[noreturn]] void abort_with(const Error& cause);

  /// Communicator::abort(), from any thread, after the fatal state is set: aborts the NCCL
  /// communicator now if no other thread is inside a channel call; else that thread, which polls
  /// the fatal state while it waits, aborts it (so that no thread uses the communicator while
  /// ncclCommAbort frees it). Never blocks, never throws.
  void abort_soon(const Error& cause) noexcept;

  /// A stream for meshcomm's own messages that name none.
  [[nodiscard]] cudaStream_t internal_stream() const noexcept { return internal_stream_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

  /// An event recorded now on `stream` for `work`'s first test: no later collective shares
  /// `work` from then on.
  cudaEvent_t record_event(cudaStream_t stream, const NcclWork* work);
  /// Returns an event for reuse.
  void recycle(cudaEvent_t event) noexcept;

 private:
  struct Queued {
    bool is_send;
    void* data;
    std::size_t bytes;
    int peer;
    cudaStream_t stream;
    std::shared_ptr<NcclWork> work;
  };

  NcclChannel(ncclComm_t comm, std::chrono::milliseconds timeout, std::shared_ptr<FatalState> fatal);
  /// Waits until the communicator has no call in progress; aborts at the timeout.
  void settle(const char* what, const ErrorContext& context);
  /// Throws Error(backend_failure) naming `what` unless `result` is success or in progress.
  void check(ncclResult_t result, const char* what, const ErrorContext& context);
  void flush_locked();
  /// Fails fast on an aborted channel, and puts queued sends and receives on their streams.
  void before_enqueue_locked(const NcclCallSite& site);
  /// Checks an enqueue's result and waits for it where NCCL left it in progress.
  void after_enqueue_locked(ncclResult_t result, const NcclCallSite& site);
  [[noreturn]] void abort_locked(const Error& cause);
  /// abort_locked() without the throw.
  void abort_comm_locked(const Error& why) noexcept;
  /// Aborts (throwing the fatal error) if the fatal state was set from outside, by abort_soon().
  void abort_if_fatal_locked(const ErrorContext& context);
  cudaEvent_t take_event();
  /// The work of a collective just queued on `stream`: the open one of that stream if no one has
  /// tested it yet, else a new one, which becomes the open one.
  std::shared_ptr<NcclWork> collective_work_locked(cudaStream_t stream, const NcclCallSite& site);

  SpinLock mutex_;
  ncclComm_t comm_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<FatalState> fatal_;
  bool aborted_ = false;
  cudaStream_t internal_stream_ = nullptr;
  std::vector<Queued> queued_;
  std::vector<cudaEvent_t> spare_events_;
  /// The latest collective's work while no one has tested it (weak: works hold the channel).
  std::weak_ptr<NcclWork> open_collective_;
};

}  // namespace meshcomm::detail
