#pragma once

// The wire form and shared steps of single-copy messages (ucx_single_copy.hpp), for the sending
// side (ucx_single_copy_send.cpp) and the receiving side (ucx_single_copy_receive.cpp).
//
// The sender announces a large message with a descriptor. The receiver then chooses how it moves:
// - this process is sending a large message of its own at the time (an exchange, a ring step):
//   both cores are busy with their own traffic, so the receiver reads the bytes straight out of
//   the sender's memory in one copy, which halves the traffic through memory;
// - otherwise (a one-way transfer, a ping-pong, a tree's broadcast): the sender's core would only
//   wait, so the receiver asks for the bytes as a tagged message, which UCX moves through its
//   shared-memory queues in two copies that run on both cores at once (on the 2-core VM of
//   perftests/README.md, 1.2-3x faster one way than the kernel's single copy).
// Its acknowledgement says which (kReadInOneCopy or kSendThePayload) or why it failed.

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "../backend.hpp"
#include "process_liveness.hpp"

namespace meshcomm::detail {

class UcxPeers;

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

/// Reads `bytes` at `address` in process `pid` into `into`; 0 or the errno.
int read_from_process(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes);

/// The error of a single-copy send or receive that did not finish by its deadline; the hint
/// covers the one way both sides can disagree silently (sizes on either side of the threshold).
Error single_copy_timed_out(const CallSite& site, int tag, bool send, std::size_t bytes, Clock::time_point started,
                            Clock::time_point deadline);

/// Why a single-copy transfer still waiting on `root_peer` can never finish: the peer failed
/// (then the communicator is made fatal) or the communicator was aborted. Nothing otherwise.
/// `liveness` paces the looks at a same-host peer's process.
std::optional<Error> single_copy_hopeless(UcxPeers& peers, FatalState& fatal, LivenessSchedule& liveness, int root_peer,
                                          const CallSite& site, bool send, std::size_t bytes, int tag);

/// What a single-copy send's and receive's Work share: the core that does the transfer (it
/// outlives the Work while UCX may still call back into it) and where the call was issued.
/// `Core` has `test()` and `worker()`.
template <class Core>
class SingleCopyWork : public WorkState {
 public:
  SingleCopyWork(std::shared_ptr<Core> core, std::shared_ptr<FatalState> fatal, const CallSite& site, int tag,
                 std::size_t bytes)
      : core_(std::move(core)), fatal_(std::move(fatal)), site_(site), tag_(tag), bytes_(bytes) {}

  bool test() override { return core_->test(); }
  bool sleep_until_event(Clock::time_point until) override { return core_->worker().sleep_until_event(until); }

 protected:
  /// The timeout error of this transfer at `deadline`.
  [[nodiscard]] Error timed_out(bool send, Clock::time_point deadline) const {
    return single_copy_timed_out(site_, tag_, send, bytes_, started_, deadline);
  }

  std::shared_ptr<Core> core_;
  std::shared_ptr<FatalState> fatal_;

 private:
  CallSite site_;
  int tag_;
  std::size_t bytes_;
  Clock::time_point started_ = Clock::now();
};

/// Posts a tagged receive of `bytes` into `buffer` whose completion calls `(core.*handler)(request,
/// status, received length)` from UCX's progress; the core stays alive until then. Returns the
/// request (freed by the handler), or the error UCX gave at once (no call follows).
template <class Core, void (Core::*handler)(void*, ucs_status_t, std::size_t)>
ucs_status_ptr_t post_tag_receive(const std::shared_ptr<Core>& core, ucp_worker_h worker, void* buffer,
                                  std::size_t bytes, ucp_tag_t tag) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = [](void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
    auto* holder = static_cast<std::shared_ptr<Core>*>(user_data);
    auto kept = std::move(*holder);
    delete holder;
    ((*kept).*handler)(request, status, info != nullptr ? info->length : 0);
  };
  param.user_data = new std::shared_ptr<Core>(core);
  auto request = ucp_tag_recv_nbx(worker, buffer, bytes, tag, ~ucp_tag_t{0}, &param);
  if (UCS_PTR_IS_ERR(request)) delete static_cast<std::shared_ptr<Core>*>(param.user_data);
  return request;
}

}  // namespace meshcomm::detail
