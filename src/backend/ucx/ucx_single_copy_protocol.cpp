#include "ucx_single_copy_protocol.hpp"

#include <fmt/format.h>

#include "ucx_peers.hpp"

namespace meshcomm::detail {

SingleCopyCoreState::SingleCopyCoreState(std::shared_ptr<UcxPeers> peers, std::shared_ptr<FatalState> fatal,
                                         std::size_t bytes, int root_peer, const SingleCopyTags& tags,
                                         const CallSite& site, int tag)
    : peers_(std::move(peers)),
      fatal_(std::move(fatal)),
      bytes_(bytes),
      root_peer_(root_peer),
      tags_(tags),
      site_(site),
      tag_(tag) {}

UcxWorker& SingleCopyCoreState::worker() const noexcept { return peers_->worker(); }

Error SingleCopyCoreState::timed_out(bool send, Clock::time_point started, Clock::time_point deadline) const {
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started).count();
  return Error(ErrorCode::timeout,
               fmt::format("{} of {} bytes {} peer {} (tag {}) {} within {} ms: peer {} {} no matching {} (or one "
                           "too small to go in one copy, as this one does: sizes must match)",
                           send ? "send" : "receive", bytes_, send ? "to" : "from", site_.peer, tag_,
                           send ? "was not taken" : "got no message", waited, site_.peer, send ? "posted" : "sent",
                           send ? "receive" : "message"),
               site_.context());
}

void SingleCopyCoreState::make_fatal(const Error& error) const { fatal_->set(error); }

void SingleCopyCoreState::withdraw() {
  if (request_ != nullptr) ucp_request_cancel(peers_->worker().worker(), request_);
}

ucs_status_t send_answer(ucp_ep_h endpoint, const SingleCopyAnswer& answer, ucp_tag_t tag,
                         std::shared_ptr<std::atomic<bool>> sent) {
  struct Outgoing {
    SingleCopyAnswer answer;
    std::shared_ptr<std::atomic<bool>> sent;
  };
  auto* outgoing = new Outgoing{answer, std::move(sent)};
  outgoing->sent->store(false, std::memory_order_release);
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = [](void* request, ucs_status_t, void* user_data) {
    auto* done = static_cast<Outgoing*>(user_data);
    done->sent->store(true, std::memory_order_release);
    delete done;
    ucp_request_free(request);
  };
  param.user_data = outgoing;
  auto request = ucp_tag_send_nbx(endpoint, &outgoing->answer, sizeof outgoing->answer, tag, &param);
  if (UCS_PTR_IS_PTR(request)) return UCS_OK;  // its callback sets `sent` and frees the copy
  outgoing->sent->store(true, std::memory_order_release);
  delete outgoing;
  return UCS_PTR_STATUS(request);
}

std::optional<Error> single_copy_hopeless(UcxPeers& peers, FatalState& fatal, bool look_at_process, int root_peer,
                                          const CallSite& site, bool send, std::size_t bytes, int tag) {
  if (!fatal.is_set() && !peers.failed(root_peer) && !(look_at_process && peers.look_at_process(root_peer))) {
    return std::nullopt;
  }
  if (!peers.failed(root_peer))
    return fatal.aborted_error(site.context(), withdrawal_outcome(send, bytes, site.peer, true));
  Error error(ErrorCode::peer_failure,
              fmt::format("{} of {} bytes {} peer {} (tag {}) can never complete: {}; the communicator cannot be used "
                          "again",
                          send ? "send" : "receive", bytes, send ? "to" : "from", site.peer, tag,
                          peers.failure_text(root_peer, site.peer)),
              site.context());
  fatal.set(error);
  return error;
}

}  // namespace meshcomm::detail
