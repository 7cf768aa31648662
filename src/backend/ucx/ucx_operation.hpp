#pragma once

#include <ucp/api/ucp.h>

#include <memory>
#include <optional>

#include "../backend.hpp"
#include "process_liveness.hpp"
#include "recycled_allocation.hpp"
#include "ucx_peers.hpp"

namespace meshcomm::detail {

/// One tag send or receive, or one put (its endpoint's flush), of the ucx backend: a UCX request
/// polled for completion (no callback: the request itself holds the status until it is freed).
class UcxOperation final : public WorkState {
 public:
  enum class Transfer : std::uint8_t { send, receive, put };
  struct Description {
    Transfer transfer;
    int peer;       ///< in the communicator
    int root_peer;  ///< in the root communicator, for the endpoint and failure
    int tag;
    std::size_t bytes;
    CallSite site;
  };

  /// `request` is what ucp_tag_send_nbx / ucp_tag_recv_nbx / ucp_ep_flush_nbx returned (a request, null for an
  /// operation complete at once, or an error); `received`, for a receive complete at once, the length UCX
  /// reported. `peers` is the backend's, which outlives its operations.
  UcxOperation(Description description, ucs_status_ptr_t request, std::shared_ptr<UcxPeers> peers,
               std::shared_ptr<FatalState> fatal, std::optional<std::size_t> received = std::nullopt);
  ~UcxOperation() override;

  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  bool sleep_until_event(Clock::time_point until) override { return peers_->worker().sleep_until_event(until); }

 private:
  /// Records a finished request's outcome (error_ on failure) and frees it.
  void finish(ucs_status_t status, std::size_t received);
  /// Cancels the request and progresses until UCX says so, briefly; false if it did not.
  bool cancel();
  [[nodiscard]] std::string transfer() const;
  /// Sends and puts read the caller's buffer; receives write it.
  [[nodiscard]] bool outgoing() const noexcept { return description_.transfer != Transfer::receive; }

  Description description_;
  void* request_ = nullptr;
  std::shared_ptr<UcxPeers> peers_;
  std::shared_ptr<FatalState> fatal_;
  bool done_ = false;
  std::exception_ptr error_;
  LivenessSchedule liveness_;  ///< when to look whether the peer's process has ended
  Clock::time_point started_ = coarse_now();  // read only by timeouts' messages
};

/// Whether this UCX (1.16 or later) says how long a message was when it completes a receive
/// inside ucp_tag_recv_nbx; earlier ones do not, so that no receive may complete so there.
bool ucx_reports_immediate_receive_length();

/// What start_tag_send and start_tag_receive return for a transfer that UCX finished inside the
/// call (it copied a send's bytes out, or found a receive's message already there, of its size):
/// an operation like any other, or no state at all, which a Work reads as complete.
enum class FinishedInside : bool { operation, null };

/// A tagged send of `bytes` at `data` to root rank `root_peer` (`tag`: the whole UCX tag), as a
/// UcxOperation; `site` (whose peer is in the communicator) and `user_tag` are for its errors.
std::shared_ptr<WorkState> start_tag_send(const std::shared_ptr<UcxPeers>& peers,
                                          const std::shared_ptr<FatalState>& fatal, const void* data, std::size_t bytes,
                                          int root_peer, ucp_tag_t tag, const CallSite& site, int user_tag,
                                          FinishedInside finished_inside = FinishedInside::operation);
/// A tagged receive of exactly `bytes` into `data` from root rank `root_peer`, as start_tag_send.
/// A message of another size fails it with size_mismatch, whether or not it was already there.
std::shared_ptr<WorkState> start_tag_receive(const std::shared_ptr<UcxPeers>& peers,
                                             const std::shared_ptr<FatalState>& fatal, void* data, std::size_t bytes,
                                             int root_peer, ucp_tag_t tag, const CallSite& site, int user_tag,
                                             FinishedInside finished_inside = FinishedInside::operation);

}  // namespace meshcomm::detail
