// The receiving side of single-copy messages (ucx_single_copy_protocol.hpp): it waits for the
// descriptor, then reads the sender's buffer itself or asks for the payload, and answers. The read
// and the answer wait, in the order the descriptors came, for the receive's own test or for any
// wait of the process (answer_queue.hpp). A mid-sized message may come eagerly instead of its
// descriptor, into the same receive: then it is complete as it arrives.

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include "answer_queue.hpp"
#include "process_memory.hpp"
#include "ucx_peers.hpp"
#include "ucx_single_copy.hpp"
#include "ucx_single_copy_protocol.hpp"

namespace meshcomm::detail {

namespace {

/// A receive by descriptor, driven from UCX's callbacks: whichever thread progresses the worker
/// when the descriptor arrives chooses how the bytes move (posting the payload's receive where it
/// asks for them) and queues the read and the answer for the next test of this receive or the
/// next wait of the process, whichever comes first.
class ReceiveCore final : public SingleCopyCoreState, public QueuedAnswer {
 public:
  static constexpr bool kSends = false;

  ReceiveCore(std::shared_ptr<UcxPeers> peers, std::shared_ptr<FatalState> fatal, void* data, std::size_t bytes,
              int root_peer, const SingleCopyTags& tags, const CallSite& site, int tag)
      : SingleCopyCoreState(std::move(peers), std::move(fatal), bytes, root_peer, tags, site, tag), data_(data) {}
  ~ReceiveCore() {
    release_payload_claim();
    stop_counting();
  }

  /// Posts the receive of the descriptor, or of the message itself, into the caller's buffer;
  /// `self` is this core, kept alive until UCX's callback.
  void start(const std::shared_ptr<ReceiveCore>& self) {
    self_ = self;
    auto& worker = peers_->worker();
    worker.count_large_receive(+1);
    counted_ = true;
    sends_started_at_post_ = worker.large_sends_started();
    sends_to_sender_at_post_ = peers_->large_sends_to(root_peer_);
    auto request = post_tag_receive<ReceiveCore, &ReceiveCore::announced>(
        self, worker.worker(), data_, bytes_, tags_.descriptor, tags_.descriptor_or_message);
    std::lock_guard lock(mutex_);
    if (UCS_PTR_IS_ERR(request)) {
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("receive of {} bytes from peer {} (tag {}) could not be posted: {}", bytes_, site_.peer,
                             tag_, ucs_status_string(UCS_PTR_STATUS(request))),
                 site_.context()));
    } else if (!finished_ && waiting_for_descriptor_) {
      request_ = request;
    }
  }

  /// True once finished and the sender answered; throws its error. Fails it where the peer
  /// failed or the communicator was aborted.
  bool test() {
    peers_->worker().progress();
    if (queued_.load(std::memory_order_acquire)) peers_->worker().answers().deliver_through(this);
    const bool look = liveness_.due();
    // Most polls of a receive under way find nothing new: they take no lock.
    if (!settled_.load(std::memory_order_acquire) && !look && !fatal_->is_set() && !peers_->failed(root_peer_)) {
      return false;
    }
    std::lock_guard lock(mutex_);
    const bool answered = answer_sent_->load(std::memory_order_acquire);
    if (!finished_ || (!answered && !failure_)) {
      if (auto error = single_copy_hopeless(*peers_, *fatal_, look, root_peer_, site_, false, bytes_, tag_)) {
        withdraw();
        fail(std::move(*error));
      }
    }
    if (!finished_) return false;
    if (failure_) throw *failure_;
    return answered;
  }

  /// At a timeout: withdrawn if no descriptor came yet. Once one came, the receive finishes by
  /// itself (an asked-for payload may still land in the buffer).
  AbandonedTransfer abandon() {
    return withdraw_unannounced() ? AbandonedTransfer::withdrawn : AbandonedTransfer::finishing;
  }

  /// When the Work goes away: a receive no descriptor came for yet is withdrawn; one whose read
  /// is queued reads now, while its buffer is still there.
  void drop() {
    withdraw_unannounced();
    {
      std::lock_guard lock(mutex_);
      dropped_ = true;  // a payload asked for now would land in a buffer its owner has let go
    }
    peers_->worker().answers().deliver_through(this);
  }

  /// Chooses how the announced bytes move where that waits for the answer, then reads the
  /// sender's buffer where that is owed, and answers.
  void deliver() noexcept override {
    std::lock_guard lock(mutex_);
    queued_.store(false, std::memory_order_release);
    if (transfer_unchosen_ && !finished_) choose_transfer();
    transfer_unchosen_ = false;
    if (!reads_before_answering_) {
      answer_sender(owed_answer_);
      return;
    }
    if (finished_) return;  // failed meanwhile: the peer is gone or the communicator aborted
    SingleCopyAnswer answer = owed_answer_;
    if (const int failure = read_from_process(peers_->pid(root_peer_), descriptor_.address, data_, bytes_);
        failure != 0) {
      answer.outcome = failure;
      const bool gone = failure == ESRCH;
      fail(Error(gone ? ErrorCode::peer_failure : ErrorCode::backend_failure,
                 gone ? fmt::format("receive of {} bytes from peer {} (tag {}) failed: peer {} (pid {} on this host) "
                                    "has ended; the communicator cannot be used again",
                                    bytes_, site_.peer, tag_, site_.peer, peers_->pid(root_peer_))
                      : fmt::format("receive of {} bytes from peer {} (tag {}) could not read the sender's memory "
                                    "(process_vm_readv: {}); MESHCOMM_UCX_SINGLE_COPY=0 sends large messages "
                                    "through UCX",
                                    bytes_, site_.peer, tag_, std::strerror(failure)),
                 site_.context()));
      if (gone) fatal_->set(*failure_);
    } else {
      finish();
      note_progress();  // a whole message moved on this thread, though not through UCX's progress
      if (one_way_) record(OneWayTransfer::read_in_one_copy);
    }
    answer_sender(answer);
  }

 private:
  /// The descriptor, or the message itself, is in the caller's buffer (or the receive failed).
  void announced(void* request, ucs_status_t status, const ReceivedMessage& received) {
    std::lock_guard lock(mutex_);
    request_ = nullptr;
    ucp_request_free(request);
    waiting_for_descriptor_ = false;
    announced_at_ = Clock::now();
    if (finished_) return;  // withdrawn
    if (status == UCS_ERR_MESSAGE_TRUNCATED) {
      fail(message_too_large(site_, tag_, bytes_));
      return;
    }
    if (status != UCS_OK) {
      fail(receive_failed(status));
      return;
    }
    if (received.tag != tags_.descriptor) {  // the sender sent the bytes themselves
      if (received.length != bytes_) {
        fail(message_of_other_size(site_, tag_, received.length, bytes_));
      } else {
        finish();
      }
      return;
    }
    if (received.length == sizeof descriptor_) std::memcpy(&descriptor_, data_, sizeof descriptor_);
    if (received.length != sizeof descriptor_ || descriptor_.bytes != bytes_) {
      fail(message_of_other_size(site_, tag_, descriptor_.bytes, bytes_));
      queue_answer({.outcome = SingleCopyAnswer::kSizeDiffers, .posted = bytes_}, false);
    } else {
      queue_answer({.outcome = SingleCopyAnswer::kReadInOneCopy, .posted = bytes_}, true);
      // A transfer that looks one-way now is looked at again as the answer goes (deliver()), by
      // the receive's test or any other wait of the process, once the caller has posted what it
      // posts beside the receive: a descriptor that came before its receive was posted is taken
      // as the receive is posted, before the caller's own send of an exchange. Taken for one-way
      // there, 6-19% of two-rank exchanges' receives of 1-16 MiB (sendrecv_perf, the ring's
      // halves of all_reduce_perf) fed the one-way choice and were asked for in its trials.
      transfer_unchosen_ = looks_one_way();
    }
  }

  /// Whether the transfer looks one-way, under `mutex_`. Traffic both ways at once, where both
  /// cores are busy with their own messages, always takes the single copy, which halves the
  /// traffic through memory. It is that where this process has a large send in flight, or
  /// started one to another rank since it posted this receive (a ring step posts its receive,
  /// then its send, whose answer may come before this descriptor does). A finished send to this
  /// very sender is not: its messages come in order, so this descriptor left after it had that
  /// send's payload (a request and its reply, as in a ping-pong).
  [[nodiscard]] bool looks_one_way() const {
    const auto& worker = peers_->worker();
    const auto started = worker.large_sends_started() - sends_started_at_post_;
    const auto started_to_sender = peers_->large_sends_to(root_peer_) - sends_to_sender_at_post_;
    return worker.large_sends_in_flight() == 0 && started == started_to_sender;
  }

  /// Chooses how a transfer that looked one-way as it was announced moves, under `mutex_`: read
  /// in one copy where it no longer looks so, else the way that measured faster
  /// (one_way_transfer_choice.hpp).
  void choose_transfer() {
    one_way_ = looks_one_way();
    if (one_way_ && !dropped_ &&
        peers_->worker().one_way_choice().choose(bytes_) == OneWayTransfer::ask_for_payload && ask_for_payload()) {
      owed_answer_ = {.outcome = SingleCopyAnswer::kSendThePayload, .posted = bytes_};
      reads_before_answering_ = false;
    }
  }

  /// Queues `answer` behind the answers this process owes before it; `read` says whether to read
  /// the sender's buffer first.
  void queue_answer(const SingleCopyAnswer& answer, bool read) {
    owed_answer_ = answer;
    reads_before_answering_ = read;
    queued_.store(true, std::memory_order_release);
    peers_->worker().answers().add(self_.lock());
  }

  /// Sends the sender `answer`; a failure to send fails this receive, unless it failed already.
  void answer_sender(const SingleCopyAnswer& answer) {
    if (const auto sent = send_answer(peers_->endpoint(root_peer_), answer, tags_.acknowledgement, answer_sent_);
        sent != UCS_OK && !failure_) {
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("receive of {} bytes from peer {} (tag {}) could not answer the sender: {}", bytes_,
                             site_.peer, tag_, ucs_status_string(sent)),
                 site_.context()));
    }
  }

  /// Posts the payload's receive into the caller's buffer, where no other payload from this
  /// peer is awaited (payloads of one tag must come in the order they were asked for; while one
  /// is awaited, later messages are read in one copy instead). False if it could not.
  bool ask_for_payload() {
    if (!peers_->claim_payload(root_peer_)) return false;
    payload_claimed_ = true;
    auto self = self_.lock();
    auto request = post_tag_receive<ReceiveCore, &ReceiveCore::payload_arrived>(self, peers_->worker().worker(), data_,
                                                                                bytes_, tags_.payload);
    if (UCS_PTR_IS_ERR(request)) {
      release_payload_claim();
      return false;
    }
    request_ = request;
    return true;
  }

  void payload_arrived(void* request, ucs_status_t status, const ReceivedMessage& received) {
    const std::size_t length = received.length;
    std::lock_guard lock(mutex_);
    request_ = nullptr;
    ucp_request_free(request);
    release_payload_claim();
    if (finished_) return;  // withdrawn
    if (status != UCS_OK) {
      fail(receive_failed(status));
    } else if (length != bytes_) {
      fail(message_of_other_size(site_, tag_, length, bytes_));
    } else {
      finish();
      record(OneWayTransfer::ask_for_payload);
    }
  }

  /// Tells the process's one-way choice how long this message took from its announcement.
  void record(OneWayTransfer transfer) {
    peers_->worker().one_way_choice().record(bytes_, transfer, Clock::now() - announced_at_);
  }

  /// The error of a descriptor or payload that UCX failed to deliver.
  [[nodiscard]] Error receive_failed(ucs_status_t status) const {
    return Error(ErrorCode::backend_failure,
                 fmt::format("receive of {} bytes from peer {} (tag {}) failed: {}", bytes_, site_.peer, tag_,
                             ucs_status_string(status)),
                 site_.context());
  }

  void fail(Error error) {
    failure_ = std::move(error);
    finish();
  }

  /// Marks the receive finished: it no longer counts as a receive in flight for the worker.
  void finish() {
    finished_ = true;
    settled_.store(true, std::memory_order_release);
    stop_counting();
  }

  void stop_counting() {
    if (counted_) peers_->worker().count_large_receive(-1);
    counted_ = false;
  }

  /// Withdraws the receive if no descriptor came yet: true if it did so.
  bool withdraw_unannounced() {
    std::lock_guard lock(mutex_);
    if (finished_ || !waiting_for_descriptor_) return false;
    withdraw();
    finish();
    return true;
  }

  void release_payload_claim() {
    if (payload_claimed_) peers_->release_payload(root_peer_);
    payload_claimed_ = false;
  }

  void* data_;
  std::weak_ptr<ReceiveCore> self_;
  bool waiting_for_descriptor_ = true;
  bool payload_claimed_ = false;
  std::atomic<bool> queued_{false};     ///< an answer (and maybe a read) waits in the worker's queue
  bool reads_before_answering_ = false;  ///< the queued answer follows a read of the sender's buffer
  SingleCopyAnswer owed_answer_;
  std::shared_ptr<std::atomic<bool>> answer_sent_ = std::make_shared<std::atomic<bool>>(true);
  SingleCopyDescriptor descriptor_;
  Clock::time_point announced_at_;
  bool counted_ = false;  ///< counted in the worker's large receives in flight
  std::atomic<bool> settled_{false};  ///< finished_, for the polls that take no lock
  std::uint64_t sends_started_at_post_ = 0;  ///< the worker's large_sends_started() as the receive was posted
  std::uint64_t sends_to_sender_at_post_ = 0;  ///< large_sends_to(root_peer_) then
  bool one_way_ = false;  ///< no large send of this process ran beside it (see choose_transfer())
  bool transfer_unchosen_ = false;  ///< looked one-way as announced: choose_transfer() decides
  bool dropped_ = false;  ///< its Work went away: the bytes are read, never asked for
};

}  // namespace

std::shared_ptr<WorkState> start_single_copy_receive(const std::shared_ptr<UcxPeers>& peers,
                                                     const std::shared_ptr<FatalState>& fatal, BufferView data,
                                                     int root_peer, const SingleCopyTags& tags, const CallSite& site,
                                                     int tag) {
  return start_single_copy<ReceiveCore>(peers, fatal, data, root_peer, tags, site, tag);
}

}  // namespace meshcomm::detail
