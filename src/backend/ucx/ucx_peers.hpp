#pragma once

#include <ucp/api/ucp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <span>
#include <vector>

#include "meshcomm/bootstrap.hpp"
#include "ucx_single_copy.hpp"
#include "ucx_worker.hpp"

namespace meshcomm::detail {

/// The endpoints to every rank of a root communicator (indexed by root rank), made from worker
/// addresses exchanged through the bootstrap, and which peers UCX has reported failed.
class UcxPeers {
 public:
  /// Collective over the bootstrap's ranks: exchanges worker addresses and a context id proposal,
  /// and connects to every rank. `context` becomes the id every rank agreed on.
  UcxPeers(std::shared_ptr<UcxWorker> worker, Bootstrap& bootstrap, std::uint32_t& context);
  ~UcxPeers();
  UcxPeers(const UcxPeers&) = delete;
  UcxPeers& operator=(const UcxPeers&) = delete;

  /// Ranks of the root communicator.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(endpoints_.size()); }
  [[nodiscard]] ucp_ep_h endpoint(int root_rank) const noexcept {
    return endpoints_[static_cast<std::size_t>(root_rank)];
  }
  /// Whether UCX reported `root_rank`'s endpoint failed (and how).
  [[nodiscard]] bool failed(int root_rank) const noexcept {
    return failures_[static_cast<std::size_t>(root_rank)].load(std::memory_order_acquire) != UCS_OK;
  }
  [[nodiscard]] ucs_status_t failure(int root_rank) const noexcept {
    return failures_[static_cast<std::size_t>(root_rank)].load(std::memory_order_acquire);
  }
  /// Looks whether `root_rank`'s process, if it is on this host, has ended (exited, killed, a
  /// zombie): then marks the peer failed, as an endpoint error would. UCX's keepalive misses a
  /// killed process its parent has not reaped yet. Returns whether the peer is marked failed.
  bool look_at_process(int root_rank) noexcept;
  /// Why `root_rank` counts as failed, for errors naming it as `peer`: "UCX reports peer 1
  /// failed (Connection reset by remote peer)" or "peer 1 (pid 42 on this host) has ended".
  [[nodiscard]] std::string failure_text(int root_rank, int peer) const;
  [[nodiscard]] UcxWorker& worker() const noexcept { return *worker_; }
  /// Whether large messages with `root_rank` go in one copy (ucx_single_copy.hpp).
  [[nodiscard]] bool single_copy(int root_rank) const noexcept {
    return single_copy_.peers[static_cast<std::size_t>(root_rank)] != 0;
  }
  /// Whether `root_rank` runs on this host as this user (its UCX-mapped memory maps here).
  [[nodiscard]] bool same_host(int root_rank) const noexcept {
    return same_host_[static_cast<std::size_t>(root_rank)] != 0;
  }
  /// The smallest message that always goes in one copy (the same on every rank).
  [[nodiscard]] std::size_t single_copy_bytes() const noexcept { return single_copy_.threshold; }
  /// The smallest message of an exchange that goes in one copy: the exchange threshold, or,
  /// unless the environment gave it, the single-copy one where this host's ranks outnumber its
  /// cores (an exchange's read then waits for the peer's process to run, where an eager send
  /// leaves without it). Receives from the smaller of the two thresholds (the same on every rank)
  /// take a descriptor or the message, so each sender may decide alone.
  [[nodiscard]] std::size_t exchange_single_copy_bytes() const noexcept {
    const bool eager = ranks_share_cores_ && !single_copy_.exchange_threshold_given;
    return eager ? single_copy_.threshold : single_copy_.exchange_threshold;
  }
  [[nodiscard]] std::size_t single_copy_receive_bytes() const noexcept {
    return std::min(single_copy_.threshold, single_copy_.exchange_threshold);
  }
  /// Takes the one slot for an asked-for single-copy payload from `root_rank` (payloads of one
  /// tag must come in the order they were asked for, so at most one is awaited per peer); false
  /// if it is taken. release_payload gives it back once the payload is in or withdrawn.
  bool claim_payload(int root_rank) noexcept {
    bool expected = false;
    return payload_awaited_[static_cast<std::size_t>(root_rank)].compare_exchange_strong(expected, true);
  }
  void release_payload(int root_rank) noexcept {
    payload_awaited_[static_cast<std::size_t>(root_rank)].store(false);
  }
  /// Counts a single-copy send to `root_rank` starting, here and in the worker's
  /// count_large_send (which it calls).
  void count_large_send_to(int root_rank) noexcept {
    worker_->count_large_send(+1);
    large_sends_to_[static_cast<std::size_t>(root_rank)].fetch_add(1, std::memory_order_relaxed);
  }
  /// How many single-copy sends to `root_rank` have started through these endpoints.
  [[nodiscard]] std::uint64_t large_sends_to(int root_rank) const noexcept {
    return large_sends_to_[static_cast<std::size_t>(root_rank)].load(std::memory_order_relaxed);
  }
  /// `root_rank`'s process id.
  [[nodiscard]] std::int64_t pid(int root_rank) const noexcept { return pids_[static_cast<std::size_t>(root_rank)]; }

 private:
  static void on_endpoint_error(void* slot, ucp_ep_h endpoint, ucs_status_t status);

  std::shared_ptr<UcxWorker> worker_;
  std::vector<ucp_ep_h> endpoints_;
  std::unique_ptr<std::atomic<ucs_status_t>[]> failures_;
  SingleCopyPlan single_copy_;
  std::vector<char> same_host_;
  bool ranks_share_cores_ = false;  ///< this host's ranks outnumber its cores (host_cores.hpp)
  std::vector<std::int64_t> pids_;
  std::vector<ProcessIdentity> processes_;
  std::unique_ptr<std::atomic<bool>[]> ended_;  ///< failed because its process was seen to end
  std::unique_ptr<std::atomic<bool>[]> payload_awaited_;  ///< per peer: claim_payload
  std::unique_ptr<std::atomic<std::uint64_t>[]> large_sends_to_;  ///< per peer: count_large_send_to
};

}  // namespace meshcomm::detail
