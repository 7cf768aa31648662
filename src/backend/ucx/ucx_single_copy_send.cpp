// The sending side of single-copy messages (ucx_single_copy_protocol.hpp): a descriptor out, the
// receiver's answer back, and the payload as a tagged message where the answer asks for it.

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <optional>

#include "ucx_operation.hpp"
#include "ucx_peers.hpp"
#include "ucx_single_copy.hpp"
#include "ucx_single_copy_protocol.hpp"

namespace meshcomm::detail {

namespace {

/// A send by descriptor, driven from UCX's callback: the answer's arrival starts the payload
/// where the receiver asks for it, whichever thread progresses the worker then, so a receiver
/// never waits on a sender whose thread is waiting on something else.
class SendCore final : public SingleCopyCoreState {
 public:
  static constexpr bool kSends = true;

  SendCore(std::shared_ptr<UcxPeers> peers, std::shared_ptr<FatalState> fatal, const void* data, std::size_t bytes,
           int root_peer, const SingleCopyTags& tags, const CallSite& site, int tag)
      : SingleCopyCoreState(std::move(peers), std::move(fatal), bytes, root_peer, tags, site, tag),
        data_(data),
        descriptor_{.address = reinterpret_cast<std::uint64_t>(data), .bytes = bytes} {}
  ~SendCore() { stop_counting(); }

  /// Posts the answer's receive, then sends the descriptor; `self` is this core, kept alive
  /// until UCX's callback.
  void start(const std::shared_ptr<SendCore>& self) {
    peers_->count_large_send_to(root_peer_);
    counted_ = true;
    auto request = post_tag_receive<SendCore, &SendCore::answered>(self, peers_->worker().worker(), &answer_,
                                                                   sizeof answer_, tags_.acknowledgement);
    if (UCS_PTR_IS_ERR(request)) {
      std::lock_guard lock(mutex_);
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("send of {} bytes to peer {} (tag {}) could not be posted: {}", bytes_, site_.peer, tag_,
                             ucs_status_string(UCS_PTR_STATUS(request))),
                 site_.context()));
      return;
    }
    {
      std::lock_guard lock(mutex_);
      if (!answered_) request_ = request;
    }
    // Sent without the lock: UCX's callbacks take it, from whichever thread progresses.
    auto announced =
        start_tag_send(peers_, fatal_, &descriptor_, sizeof descriptor_, root_peer_, tags_.descriptor, site_, tag_);
    std::lock_guard lock(mutex_);
    announced_ = std::move(announced);
  }

  /// True once the receiver read the bytes or took the payload; throws the send's error. Never
  /// progresses the worker while it holds the core's lock, which UCX's callbacks take.
  bool test() {
    peers_->worker().progress();
    std::shared_ptr<WorkState> announced;
    std::shared_ptr<WorkState> payload;
    {
      std::lock_guard lock(mutex_);
      if (!answered_ && !finished_) {
        if (auto error = single_copy_hopeless(*peers_, *fatal_, liveness_.due(), root_peer_, site_, true, bytes_, tag_)) {
          withdraw();
          fail(std::move(*error));
        }
      }
      if (!finished_) announced = announced_;
      payload = payload_;
      if (!payload && finished_) {
        if (failure_) throw *failure_;
        return true;
      }
    }
    if (announced) announced->test();  // throws where the descriptor could not be sent
    if (!payload) {
      // Unanswered. The receiver may be waiting in turn for this process to read what it sent
      // (an exchange that waits for its send first), so this wait reads too, oldest owed first,
      // as any progress of Open MPI's does.
      peers_->worker().answers().deliver_oldest();
      return false;
    }
    if (!payload->test()) return false;
    std::lock_guard lock(mutex_);
    stop_counting();  // an asked-for payload is this process's traffic until it has left
    return true;
  }

  /// At a timeout: no answer is awaited any more, and the receiver may still read the buffer.
  AbandonedTransfer abandon() {
    std::lock_guard lock(mutex_);
    if (!answered_) withdraw();
    finished_ = true;
    return AbandonedTransfer::exposed;
  }

  /// When the Work goes away: the transfer goes on, the core kept alive by UCX's callbacks.
  void drop() {}

 private:
  void answered(void* request, ucs_status_t status, const ReceivedMessage& received) {
    const std::size_t length = received.length;
    std::lock_guard lock(mutex_);
    request_ = nullptr;
    ucp_request_free(request);
    answered_ = true;
    // A payload the receiver asks for is still this process's traffic: counted until it has left.
    const bool sends_payload = !finished_ && status == UCS_OK && length == sizeof answer_ &&
                               answer_.outcome == SingleCopyAnswer::kSendThePayload;
    if (!sends_payload) stop_counting();
    if (finished_) return;  // withdrawn
    if (status != UCS_OK || length != sizeof answer_) {
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("send of {} bytes to peer {} (tag {}) got no answer from it: {}", bytes_, site_.peer, tag_,
                             status != UCS_OK ? ucs_status_string(status) : "an answer of the wrong size"),
                 site_.context()));
    } else if (answer_.outcome == SingleCopyAnswer::kReadInOneCopy) {
      finished_ = true;
    } else if (answer_.outcome == SingleCopyAnswer::kSendThePayload) {
      payload_ = start_tag_send(peers_, fatal_, data_, bytes_, root_peer_, tags_.payload, site_, tag_);
    } else if (answer_.outcome == SingleCopyAnswer::kSizeDiffers) {
      fail(Error(ErrorCode::size_mismatch,
                 fmt::format("message size mismatch on tag {}: this rank sent {} bytes but peer {} posted a receive "
                             "of {} bytes; both sides must agree",
                             tag_, bytes_, site_.peer, answer_.posted),
                 site_.context()));
    } else {
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("peer {} could not read this rank's {} bytes (tag {}): {}; MESHCOMM_UCX_SINGLE_COPY=0 "
                             "sends large messages through UCX instead",
                             site_.peer, bytes_, tag_, std::strerror(static_cast<int>(answer_.outcome))),
                 site_.context()));
    }
  }

  void fail(Error error) {
    failure_ = std::move(error);
    finished_ = true;
    stop_counting();
  }

  void stop_counting() {
    if (counted_) peers_->worker().count_large_send(-1);
    counted_ = false;
  }

  const void* data_;
  SingleCopyDescriptor descriptor_;
  bool counted_ = false;
  bool answered_ = false;
  SingleCopyAnswer answer_;
  std::shared_ptr<WorkState> announced_;
  std::shared_ptr<WorkState> payload_;
};

}  // namespace

std::shared_ptr<WorkState> start_single_copy_send(const std::shared_ptr<UcxPeers>& peers,
                                                  const std::shared_ptr<FatalState>& fatal, ConstBufferView data,
                                                  int root_peer, const SingleCopyTags& tags, const CallSite& site,
                                                  int tag) {
  return start_single_copy<SendCore>(peers, fatal, data, root_peer, tags, site, tag);
}

}  // namespace meshcomm::detail
