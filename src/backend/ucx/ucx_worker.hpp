#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "meshcomm/error.hpp"
#include "one_way_transfer_choice.hpp"
#include "answer_queue.hpp"
#include "progress_hooks.hpp"

namespace meshcomm::detail {

/// The process's UCP context and worker, shared by every ucx communicator (matching is
/// worker-wide: the tag layout keeps communicators, lanes and sources apart). Error handling is
/// per peer with the shared-memory transports kept and a keepalive of 1 s, unless
/// MESHCOMM_UCX_ERROR_MODE=none or MESHCOMM_UCX_KEEPALIVE say otherwise.
class UcxWorker {
 public:
  /// The process's worker, made on first use. Throws Error(backend_failure) naming the UCX call.
  static std::shared_ptr<UcxWorker> instance();
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  [[nodiscard]] ucp_worker_h worker() const noexcept { return worker_; }
  /// The UCP context, for memory mapped with it.
  [[nodiscard]] ucp_context_h context() const noexcept { return context_; }
  /// This worker's address, for peers' endpoints.
  [[nodiscard]] const std::vector<std::byte>& address() const noexcept { return address_; }
  /// Whether endpoints report failed peers (error mode peer).
  [[nodiscard]] bool peer_errors() const noexcept { return peer_errors_; }
  /// Drives the worker once (callbacks, completions); returns how many events it handled (a
  /// large put or rendezvous takes many calls, each moving one fragment). Where it handled any,
  /// tells this thread's wait to poll again at once instead of backing off (note_progress).
  unsigned progress() noexcept;

  /// Sleeps until the worker has an event (a message, a completion, an endpoint error) or
  /// `until`: arms the worker's wakeup descriptor and polls it. Returns at once if events or
  /// answers are owed. False if the worker has no wakeup descriptor.
  bool sleep_until_event(std::chrono::steady_clock::time_point until) noexcept;

  /// Counts a single-copy send of this process starting (+1) or done with its bytes (-1: read,
  /// its asked-for payload sent, or ended). While any is in flight, this process is moving a
  /// large message of its own, and it reads large messages addressed to it in one copy rather
  /// than asking for them (ucx_single_copy_protocol.hpp).
  void count_large_send(int change) noexcept {
    if (change > 0) large_sends_started_.fetch_add(1, std::memory_order_relaxed);
    large_sends_.fetch_add(change, std::memory_order_relaxed);
  }
  [[nodiscard]] int large_sends_in_flight() const noexcept { return large_sends_.load(std::memory_order_relaxed); }
  /// How many single-copy sends this process has started: a receive compares it at its posting
  /// and at its descriptor's arrival, to learn whether this process sent in between.
  [[nodiscard]] std::uint64_t large_sends_started() const noexcept {
    return large_sends_started_.load(std::memory_order_relaxed);
  }

  /// Counts a receive that takes a message by descriptor or eagerly (ucx_single_copy.hpp) being
  /// posted (+1) or done (-1). A mid-sized send that starts while any is posted belongs to an
  /// exchange, and goes by descriptor (UcxPeers::exchange_single_copy_bytes).
  void count_large_receive(int change) noexcept { large_receives_.fetch_add(change, std::memory_order_relaxed); }
  [[nodiscard]] int large_receives_in_flight() const noexcept {
    return large_receives_.load(std::memory_order_relaxed);
  }

  /// How this process receives large one-way messages: measured per size class, shared by every
  /// communicator (MESHCOMM_UCX_ONE_WAY).
  [[nodiscard]] OneWayTransferChoice& one_way_choice() noexcept { return one_way_choice_; }

  /// The answers (and reads) this process owes its single-copy senders, in the order owed; every
  /// wait of the process delivers them (answer_queue.hpp).
  [[nodiscard]] AnswerQueue& answers() noexcept { return answers_; }

  /// A context id no communicator of this process has used, at least `at_least`; later calls
  /// return larger ones. Communicators agree on the largest their ranks propose.
  std::uint32_t propose_context(std::uint32_t at_least = 0) noexcept;
  /// Marks `context` and every id below it used.
  void take_context(std::uint32_t context) noexcept;

 private:
  UcxWorker();

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<std::byte> address_;
  int event_fd_ = -1;  ///< the worker's wakeup descriptor
  bool peer_errors_ = true;
  std::atomic<std::uint32_t> next_context_{0};
  std::atomic<int> large_sends_{0};
  std::atomic<std::uint64_t> large_sends_started_{0};
  std::atomic<int> large_receives_{0};
  OneWayTransferChoice one_way_choice_{one_way_policy_from_environment()};
  AnswerQueue answers_;
  std::unique_ptr<ProgressHook> hook_;  ///< every wait in this process drives the worker too
};

/// Throws Error(backend_failure) naming `call` and UCX's text unless `status` is UCS_OK.
void check_ucs(ucs_status_t status, const char* call, const ErrorContext& context);

}  // namespace meshcomm::detail
