#pragma once

// The wire form and shared steps of single-copy messages (ucx_single_copy.hpp), for the sending
// side (ucx_single_copy_send.cpp) and the receiving side (ucx_single_copy_receive.cpp).
//
// The sender announces a large message with a descriptor. The receiver then chooses how it moves:
// - this process sends a large message of its own while the receive waits (an exchange, a ring
//   step): both cores are busy with their own traffic, so the receiver reads the bytes straight
//   out of the sender's memory in one copy, which halves the traffic through memory. The read is
//   done by the receive's own test, next to the use of the data, or by any other wait of the
//   process that comes first (answer_queue.hpp);
// - otherwise (a one-way transfer, a ping-pong, a tree's broadcast): the sender's core would only
//   wait, so it may as well copy too: the receiver can ask for the bytes as a tagged message,
//   which UCX moves through its shared-memory queues in two copies that run on both cores at once.
//   Which of the two ways is faster depends on the traffic (perftests/HISTORY.md), so the receiver
//   takes the one that measured faster for that size (one_way_transfer_choice.hpp).
// Its acknowledgement says which (kReadInOneCopy or kSendThePayload) or why it failed. A sender
// matches the acknowledgements of one tag in the order they leave, so a receiver answers in the
// order the descriptors came (answer_queue.hpp).

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "../backend.hpp"
#include "process_liveness.hpp"
#include "ucx_single_copy.hpp"

namespace meshcomm::detail {

class UcxPeers;
class UcxWorker;

/// Where the sender's buffer is.
struct SingleCopyDescriptor {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

/// The receiver's answer: one of the outcomes below, or the errno of its read (then the
/// message failed); `posted` is the size of the receive it matched.
struct SingleCopyAnswer {
  static constexpr std::int64_t kReadInOneCopy = 0;
  static constexpr std::int64_t kSizeDiffers = -1;
  static constexpr std::int64_t kSendThePayload = -2;

  std::int64_t outcome = kReadInOneCopy;
  std::uint64_t posted = 0;
};

/// Sends `answer` tagged `tag` to `endpoint` from a copy that UCX's callback frees (UCX may
/// send it only later, when the peer's queue has room again, after the receive that answers is
/// gone), and sets `sent` once UCX has taken it: the receive stays incomplete until then, so that
/// its waits keep progressing the worker, without which a pending answer would never leave.
/// Returns UCS_OK, or the error UCX gave at once.
ucs_status_t send_answer(ucp_ep_h endpoint, const SingleCopyAnswer& answer, ucp_tag_t tag,
                         std::shared_ptr<std::atomic<bool>> sent);


/// Why a single-copy transfer still waiting on `root_peer` can never finish: the peer failed
/// (then the communicator is made fatal) or the communicator was aborted. Nothing otherwise.
/// `look_at_process`: whether to look now whether a same-host peer's process has ended (a
/// LivenessSchedule says when).
std::optional<Error> single_copy_hopeless(UcxPeers& peers, FatalState& fatal, bool look_at_process, int root_peer,
                                          const CallSite& site, bool send, std::size_t bytes, int tag);

/// What the cores of a single-copy send and receive share: the transfer's peer and identity (for
/// errors), the lock that UCX's callbacks take, the request in flight and how the transfer ended.
class SingleCopyCoreState {
 public:
  SingleCopyCoreState(const SingleCopyCoreState&) = delete;
  SingleCopyCoreState& operator=(const SingleCopyCoreState&) = delete;

  /// The worker that progresses the transfer.
  [[nodiscard]] UcxWorker& worker() const noexcept;

  /// The error of this transfer, started at `started`, that did not finish by `deadline`; `send`
  /// says which side this is. Its hint covers the one way both sides can disagree silently
  /// (sizes on either side of the threshold).
  [[nodiscard]] Error timed_out(bool send, Clock::time_point started, Clock::time_point deadline) const;

  /// Makes the communicator fatal with `error`.
  void make_fatal(const Error& error) const;

 protected:
  SingleCopyCoreState(std::shared_ptr<UcxPeers> peers, std::shared_ptr<FatalState> fatal, std::size_t bytes,
                      int root_peer, const SingleCopyTags& tags, const CallSite& site, int tag);
  ~SingleCopyCoreState() = default;

  /// Cancels the request in flight, if any; its callback frees it. Called with `mutex_` held.
  void withdraw();

  std::shared_ptr<UcxPeers> peers_;
  std::shared_ptr<FatalState> fatal_;
  std::size_t bytes_;
  int root_peer_;
  SingleCopyTags tags_;
  CallSite site_;
  int tag_;
  std::recursive_mutex mutex_;  // UCX may call back into the core while a method holds it
  void* request_ = nullptr;
  bool finished_ = false;
  std::optional<Error> failure_;
  LivenessSchedule liveness_;  ///< read only by the Work's tests
};

/// What became of a single-copy transfer that its Work stopped waiting for at a timeout.
enum class AbandonedTransfer {
  withdrawn,  // nothing moved and nothing will: the communicator stays usable
  finishing,  // it goes on by itself; if it has finished by now, the wait succeeds after all
  exposed,    // it is no longer followed, and the peer may still read or write the buffer
};

/// The Work of a single-copy send or receive. It owns the core that does the transfer, which
/// outlives the Work while UCX may still call back into it. `Core` is a SingleCopyCoreState with
/// `kSends`, `test()`, `abandon()` (called at a timeout) and `drop()` (called when the Work goes
/// away).
template <class Core>
class SingleCopyWork final : public WorkState {
 public:
  explicit SingleCopyWork(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~SingleCopyWork() override { core_->drop(); }
  SingleCopyWork(const SingleCopyWork&) = delete;
  SingleCopyWork& operator=(const SingleCopyWork&) = delete;

  bool test() override { return core_->test(); }
  bool sleep_until_event(Clock::time_point until) override { return core_->worker().sleep_until_event(until); }

  /// At the deadline the transfer is abandoned. Where the peer may still touch the buffer, the
  /// communicator cannot be used again.
  void wait_until(Clock::time_point deadline) override {
    if (poll_until([this] { return test(); }, deadline)) return;
    const auto error = core_->timed_out(Core::kSends, started_, deadline);
    switch (core_->abandon()) {
      case AbandonedTransfer::withdrawn:
        throw error;
      case AbandonedTransfer::finishing:
        if (test()) return;
        break;
      case AbandonedTransfer::exposed:
        break;
    }
    core_->make_fatal(error);
    throw error;
  }

 private:
  std::shared_ptr<Core> core_;
  Clock::time_point started_ = coarse_now();  // read only by timeouts' messages
};

/// Starts a single-copy transfer of `data` with root rank `root_peer` driven by a new `Core`,
/// and returns its Work.
template <class Core, class Buffer>
std::shared_ptr<WorkState> start_single_copy(const std::shared_ptr<UcxPeers>& peers,
                                             const std::shared_ptr<FatalState>& fatal, Buffer data, int root_peer,
                                             const SingleCopyTags& tags, const CallSite& site, int tag) {
  auto core = std::make_shared<Core>(peers, fatal, data.data, data.bytes(), root_peer, tags, site, tag);
  core->start(core);
  return std::make_shared<SingleCopyWork<Core>>(std::move(core));
}

/// What a completed tagged receive took in.
struct ReceivedMessage {
  std::size_t length = 0;
  ucp_tag_t tag = 0;  ///< the sender's, where the receive's mask left bits out
};

/// Posts a tagged receive of `bytes` into `buffer` whose completion calls `(core.*handler)(request,
/// status, what was received)` from UCX's progress; the core stays alive until then. Returns the
/// request (freed by the handler), or the error UCX gave at once (no call follows).
template <class Core, void (Core::*handler)(void*, ucs_status_t, const ReceivedMessage&)>
ucs_status_ptr_t post_tag_receive(const std::shared_ptr<Core>& core, ucp_worker_h worker, void* buffer,
                                  std::size_t bytes, ucp_tag_t tag, ucp_tag_t mask = ~ucp_tag_t{0}) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = [](void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
    auto* holder = static_cast<std::shared_ptr<Core>*>(user_data);
    auto kept = std::move(*holder);
    delete holder;
    ((*kept).*handler)(request, status,
                       info != nullptr ? ReceivedMessage{info->length, info->sender_tag} : ReceivedMessage{});
  };
  param.user_data = new std::shared_ptr<Core>(core);
  auto request = ucp_tag_recv_nbx(worker, buffer, bytes, tag, mask, &param);
  if (UCS_PTR_IS_ERR(request)) delete static_cast<std::shared_ptr<Core>*>(param.user_data);
  return request;
}

}  // namespace meshcomm::detail
