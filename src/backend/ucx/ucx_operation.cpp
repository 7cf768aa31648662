#include "ucx_operation.hpp"

#include <fmt/format.h>

namespace meshcomm::detail {

UcxOperation::UcxOperation(Description description, ucs_status_ptr_t request, std::shared_ptr<UcxPeers> peers,
                           std::shared_ptr<FatalState> fatal, std::optional<std::size_t> received)
    : description_(std::move(description)), peers_(std::move(peers)), fatal_(std::move(fatal)) {
  if (request == nullptr) {
    finish(UCS_OK, received.value_or(description_.bytes));
  } else if (UCS_PTR_IS_ERR(request)) {
    finish(UCS_PTR_STATUS(request), 0);
  } else {
    request_ = request;
  }
}

UcxOperation::~UcxOperation() {
  // A Work dropped before completion leaves its request to finish: UCX frees it then.
  if (request_ != nullptr) {
    if (fatal_->is_set() && !outgoing()) ucp_request_cancel(peers_->worker().worker(), request_);
    ucp_request_free(request_);
  }
}

std::string UcxOperation::transfer() const {
  const auto& d = description_;
  switch (d.transfer) {
    case Transfer::send: return fmt::format("send of {} bytes to peer {} (tag {})", d.bytes, d.peer, d.tag);
    case Transfer::receive: return fmt::format("receive of {} bytes from peer {} (tag {})", d.bytes, d.peer, d.tag);
    case Transfer::put: return fmt::format("put of {} bytes into peer {}'s memory", d.bytes, d.peer);
  }
  return {};
}

void UcxOperation::finish(ucs_status_t status, std::size_t received) {
  done_ = true;
  if (request_ != nullptr) {
    ucp_request_free(request_);
    request_ = nullptr;
  }
  const auto& d = description_;
  if (status == UCS_ERR_MESSAGE_TRUNCATED) {
    error_ = std::make_exception_ptr(message_too_large(d.site, d.tag, d.bytes));
  } else if (status == UCS_ERR_CANCELED) {
    const auto outcome = withdrawal_outcome(outgoing(), d.bytes, d.peer, true);
    error_ = std::make_exception_ptr(fatal_->is_set()
                                         ? fatal_->aborted_error(d.site.context(), outcome)
                                         : Error(ErrorCode::internal, transfer() + " was cancelled", d.site.context()));
  } else if (status != UCS_OK) {
    auto context = d.site.context();
    context.native_code = static_cast<int>(status);
    const bool peer_gone = peers_->failed(d.root_peer) || status == UCS_ERR_CONNECTION_RESET ||
                           status == UCS_ERR_ENDPOINT_TIMEOUT || status == UCS_ERR_UNREACHABLE;
    Error error(peer_gone ? ErrorCode::peer_failure : ErrorCode::backend_failure,
                fmt::format("{} failed: {}{}", transfer(), ucs_status_string(status),
                            peer_gone ? fmt::format("; UCX reports peer {} failed; the communicator cannot be used "
                                                    "again",
                                                    d.peer)
                                      : std::string()),
                context);
    fatal_->set(error);
    error_ = std::make_exception_ptr(error);
  } else if (!outgoing() && received != d.bytes) {
    error_ = std::make_exception_ptr(message_of_other_size(d.site, d.tag, received, d.bytes));
  }
}

bool UcxOperation::test() {
  if (!done_) {
    peers_->worker().progress();
    ucs_status_t status = UCS_INPROGRESS;
    std::size_t received = description_.bytes;
    if (outgoing()) {
      status = ucp_request_check_status(request_);
    } else {
      ucp_tag_recv_info_t info{};
      status = ucp_tag_recv_request_test(request_, &info);
      received = info.length;
    }
    if (status != UCS_INPROGRESS) {
      finish(status, received);
    } else if (fatal_->is_set() || peers_->failed(description_.root_peer) ||
               (liveness_.due() && peers_->look_at_process(description_.root_peer))) [[unlikely]] {
      // UCX never fails a posted receive whose sender died, and abort() must end every work.
      const bool withdrawn = cancel();
      const auto& d = description_;
      if (peers_->failed(d.root_peer)) {
        auto context = d.site.context();
        context.native_code = static_cast<int>(peers_->failure(d.root_peer));
        Error error(ErrorCode::peer_failure,
                    fmt::format("{} can never complete: {}; the communicator cannot be used again", transfer(),
                                peers_->failure_text(d.root_peer, d.peer)),
                    context);
        fatal_->set(error);
        error_ = std::make_exception_ptr(error);
      } else {
        error_ = std::make_exception_ptr(
            fatal_->aborted_error(d.site.context(), withdrawal_outcome(outgoing(), d.bytes, d.peer, withdrawn)));
      }
      done_ = true;
    } else {
      return false;
    }
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

bool UcxOperation::cancel() {
  if (request_ == nullptr) return true;
  if (description_.transfer == Transfer::put) return false;  // a flush cannot be withdrawn
  ucp_request_cancel(peers_->worker().worker(), request_);
  const auto deadline = deadline_after(std::chrono::milliseconds(50));
  for (unsigned spins = 0; ucp_request_check_status(request_) == UCS_INPROGRESS; ++spins) {
    if (Clock::now() >= deadline) {
      ucp_request_free(request_);  // released by UCX when it completes
      request_ = nullptr;
      return false;
    }
    peers_->worker().progress();
  }
  ucp_request_free(request_);
  request_ = nullptr;
  return true;
}

void UcxOperation::wait_until(Clock::time_point deadline) {
  if (poll_until([this] { return test(); }, deadline)) return;
  const auto& d = description_;
  const bool withdrawn = cancel();
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started_).count();
  Error error(ErrorCode::timeout,
              d.transfer == Transfer::send
                  ? fmt::format("{} was not received within {} ms: peer {} posted no matching receive", transfer(),
                                waited, d.peer)
              : d.transfer == Transfer::receive
                  ? fmt::format("{} got no message within {} ms: peer {} sent nothing with that tag", transfer(),
                                waited, d.peer)
                  : fmt::format("{} was not confirmed within {} ms", transfer(), waited),
              d.site.context());
  if (!withdrawn) fatal_->set(error);  // a send UCX could not withdraw may still read its buffer
  done_ = true;
  error_ = std::make_exception_ptr(error);
  std::rethrow_exception(error_);
}

bool ucx_reports_immediate_receive_length() {
  static const bool reports = [] {
    unsigned major = 0;
    unsigned minor = 0;
    unsigned release = 0;
    ucp_get_version(&major, &minor, &release);
    return major > 1 || (major == 1 && minor >= 16);
  }();
  return reports;
}

std::shared_ptr<WorkState> start_tag_send(const std::shared_ptr<UcxPeers>& peers,
                                          const std::shared_ptr<FatalState>& fatal, const void* data, std::size_t bytes,
                                          int root_peer, ucp_tag_t tag, const CallSite& site, int user_tag,
                                          FinishedInside finished_inside) {
  ucp_request_param_t param{};
  // Between processes of one host UCX's rendezvous moves the bytes through the same shared-memory
  // queues as its eager protocol, after a round trip that needs the sender to run again: asking
  // for fast completion keeps messages eager up to UCX_RNDV_SEND_NBR_THRESH (256 KiB by default).
  // Across hosts the rendezvous saves copies, so it stays.
  if (peers->same_host(root_peer)) param.op_attr_mask = UCP_OP_ATTR_FLAG_FAST_CMPL;
  auto request = ucp_tag_send_nbx(peers->endpoint(root_peer), data, bytes, tag, &param);
  if (request == nullptr && finished_inside == FinishedInside::null) return nullptr;
  return make_recycled<UcxOperation>(
      UcxOperation::Description{.transfer = UcxOperation::Transfer::send, .peer = site.peer, .root_peer = root_peer,
                                .tag = user_tag, .bytes = bytes, .site = site},
      request, peers, fatal);
}

std::shared_ptr<WorkState> start_tag_receive(const std::shared_ptr<UcxPeers>& peers,
                                             const std::shared_ptr<FatalState>& fatal, void* data, std::size_t bytes,
                                             int root_peer, ucp_tag_t tag, const CallSite& site, int user_tag,
                                             FinishedInside finished_inside) {
  // A message already there completes the receive inside the call. UCX says how long it was only
  // from 1.16 on; before, a shorter one would pass unseen, so there the receive always gets a
  // request, whose test reports the length.
  ucp_tag_recv_info_t arrived{};
  ucp_request_param_t param{};
  if (ucx_reports_immediate_receive_length()) {
    param.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO;
    param.recv_info.tag_info = &arrived;
  } else {
    param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  }
  auto request = ucp_tag_recv_nbx(peers->worker().worker(), data, bytes, tag, ~ucp_tag_t{0}, &param);
  if (request == nullptr && arrived.length == bytes && finished_inside == FinishedInside::null) return nullptr;
  return make_recycled<UcxOperation>(
      UcxOperation::Description{.transfer = UcxOperation::Transfer::receive, .peer = site.peer,
                                .root_peer = root_peer, .tag = user_tag, .bytes = bytes, .site = site},
      request, peers, fatal, request == nullptr ? std::optional<std::size_t>(arrived.length) : std::nullopt);
}

}  // namespace meshcomm::detail
