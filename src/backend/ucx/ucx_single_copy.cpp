#include "ucx_single_copy.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "environment.hpp"
#include "ucx_operation.hpp"
#include "ucx_peers.hpp"

namespace meshcomm::detail {

namespace {

constexpr std::uint64_t kProbeValue = 0x6d657368636f7079;  // "meshcopy"
const volatile std::uint64_t probe_word = kProbeValue;

/// Where the sender's buffer is.
struct Descriptor {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

/// The receiver's answer: 0, or the errno of its read, or kSizeDiffers (then `posted` says what
/// it expected).
struct Acknowledgement {
  std::int64_t error = 0;
  std::uint64_t posted = 0;
};
constexpr std::int64_t kSizeDiffers = -1;

/// Reads `bytes` at `address` in process `pid` into `into`; 0 or the errno.
int read_from(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes) {
  std::size_t done = 0;
  while (done < bytes) {
    iovec local{static_cast<std::byte*>(into) + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(address + done), bytes - done};
    const auto moved = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    if (moved <= 0) return moved == 0 ? EFAULT : errno;
    done += static_cast<std::size_t>(moved);
  }
  return 0;
}

bool single_copy_allowed() {
  const auto setting = environment_variable("MESHCOMM_UCX_SINGLE_COPY");
  return !setting || setting->empty() || *setting != "0";
}

/// MESHCOMM_UCX_SINGLE_COPY_BYTES: a byte count, with K, M or G (powers of 1024) after it.
std::size_t single_copy_threshold() {
  const auto setting = environment_variable("MESHCOMM_UCX_SINGLE_COPY_BYTES");
  if (!setting) return kSingleCopyBytes;
  const std::string text(*setting);
  std::size_t digits = 0;
  std::uint64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9' && value < (std::uint64_t{1} << 40)) {
    value = value * 10 + static_cast<std::uint64_t>(text[digits++] - '0');
  }
  const std::string unit = text.substr(digits);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (digits == 0 || shift < 0 || value >= (std::uint64_t{1} << 40)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("MESHCOMM_UCX_SINGLE_COPY_BYTES = '{}' is not a size; valid: a byte count such as 65536, "
                            "64K, 1M or 1G",
                            text),
                {.backend = "ucx", .operation = "create"});
  }
  return static_cast<std::size_t>(value << shift);
}

/// The timeout of a single-copy message: the hint covers the one way both sides can disagree
/// silently (sizes on either side of the single-copy threshold go different ways).
Error timed_out(const CallSite& site, int tag, bool send, std::size_t bytes, Clock::time_point started,
                Clock::time_point deadline) {
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started).count();
  return Error(ErrorCode::timeout,
               fmt::format("{} of {} bytes {} peer {} (tag {}) {} within {} ms: peer {} {} no matching {} (or one "
                           "too small to go in one copy, as this one does: sizes must match)",
                           send ? "send" : "receive", bytes, send ? "to" : "from", site.peer, tag,
                           send ? "was not read" : "got no message", waited, site.peer, send ? "posted" : "sent",
                           send ? "receive" : "message"),
               site.context());
}

class SingleCopySend final : public WorkState {
 public:
  SingleCopySend(const std::shared_ptr<UcxPeers>& peers, const std::shared_ptr<FatalState>& fatal, const void* data,
                 std::size_t bytes, int root_peer, std::uint64_t descriptor_tag, std::uint64_t ack_tag,
                 const CallSite& site, int tag)
      : fatal_(fatal), site_(site), tag_(tag), bytes_(bytes) {
    descriptor_ = {.address = reinterpret_cast<std::uint64_t>(data), .bytes = bytes};
    acknowledged_ = start_tag_receive(peers, fatal, &acknowledgement_, sizeof acknowledgement_, root_peer, ack_tag,
                                      site, tag);
    announced_ = start_tag_send(peers, fatal, &descriptor_, sizeof descriptor_, root_peer, descriptor_tag, site, tag);
  }

  bool test() override {
    if (!done_) {
      announced_->test();
      if (!acknowledged_->test()) return false;
      done_ = true;
      if (acknowledgement_.error == kSizeDiffers) {
        error_ = std::make_exception_ptr(Error(
            ErrorCode::size_mismatch,
            fmt::format("message size mismatch on tag {}: this rank sent {} bytes but peer {} posted a receive of {} "
                        "bytes; both sides must agree",
                        tag_, bytes_, site_.peer, acknowledgement_.posted),
            site_.context()));
      } else if (acknowledgement_.error != 0) {
        error_ = std::make_exception_ptr(Error(
            ErrorCode::backend_failure,
            fmt::format("peer {} could not read this rank's {} bytes (tag {}): {}; MESHCOMM_UCX_SINGLE_COPY=0 sends "
                        "large messages through UCX instead",
                        site_.peer, bytes_, tag_, std::strerror(static_cast<int>(acknowledgement_.error))),
            site_.context()));
      }
    }
    if (error_) std::rethrow_exception(error_);
    return true;
  }

  void wait_until(Clock::time_point deadline) override {
    if (poll_until([this] { return test(); }, deadline)) return;
    // The receiver may still read the buffer: the communicator cannot be used again.
    const auto error = timed_out(site_, tag_, true, bytes_, started_, deadline);
    fatal_->set(error);
    throw error;
  }

  bool sleep_until_event(Clock::time_point until) override { return acknowledged_->sleep_until_event(until); }

 private:
  std::shared_ptr<FatalState> fatal_;
  CallSite site_;
  int tag_;
  std::size_t bytes_;
  Descriptor descriptor_;
  Acknowledgement acknowledgement_;
  std::shared_ptr<WorkState> announced_;
  std::shared_ptr<WorkState> acknowledged_;
  bool done_ = false;
  std::exception_ptr error_;
  Clock::time_point started_ = Clock::now();
};

/// A receive by descriptor, driven from UCX's callback: whichever thread progresses the worker
/// when the descriptor arrives reads the sender's buffer and acknowledges, so a sender never
/// waits on a receiver whose thread is waiting on something else.
class ReceiveCore {
 public:
  ReceiveCore(std::shared_ptr<UcxPeers> peers, std::shared_ptr<FatalState> fatal, void* data, std::size_t bytes,
              int root_peer, std::uint64_t ack_tag, const CallSite& site, int tag)
      : peers_(std::move(peers)), fatal_(std::move(fatal)), data_(data), bytes_(bytes), root_peer_(root_peer),
        ack_tag_(ack_tag), site_(site), tag_(tag) {}

  /// Posts the descriptor's receive; `self` is this core, kept alive until UCX's callback.
  void post(const std::shared_ptr<ReceiveCore>& self, std::uint64_t descriptor_tag) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv = &ReceiveCore::on_descriptor;
    param.user_data = new std::shared_ptr<ReceiveCore>(self);
    auto request = ucp_tag_recv_nbx(peers_->worker().worker(), &descriptor_, sizeof descriptor_, descriptor_tag,
                                    ~ucp_tag_t{0}, &param);
    std::lock_guard lock(mutex_);
    if (UCS_PTR_IS_ERR(request)) {
      delete static_cast<std::shared_ptr<ReceiveCore>*>(param.user_data);
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("receive of {} bytes from peer {} (tag {}) could not be posted: {}", bytes_, site_.peer,
                             tag_, ucs_status_string(UCS_PTR_STATUS(request))),
                 site_.context()));
    } else if (!finished_) {
      request_ = request;
    }
  }

  /// True once finished; throws its error. Fails it where the peer failed or the communicator
  /// was aborted.
  bool test() {
    peers_->worker().progress();
    std::unique_lock lock(mutex_);
    if (!finished_ && (fatal_->is_set() || peers_->failed(root_peer_) ||
                       (liveness_.due() && peers_->look_at_process(root_peer_)))) {
      const bool peer_failed = peers_->failed(root_peer_);
      withdraw(lock);
      fail(peer_failed ? Error(ErrorCode::peer_failure,
                               fmt::format("receive of {} bytes from peer {} (tag {}) can never complete: {}; the "
                                           "communicator cannot be used again",
                                           bytes_, site_.peer, tag_, peers_->failure_text(root_peer_, site_.peer)),
                               site_.context())
                       : fatal_->aborted_error(site_.context(), withdrawal_outcome(false, bytes_, site_.peer, true)));
      if (peer_failed) fatal_->set(*failure_);
    }
    if (!finished_) return false;
    if (failure_) throw *failure_;
    return true;
  }

  /// Withdraws the receive if no descriptor came (false if one did: then it finishes).
  bool withdraw() {
    std::unique_lock lock(mutex_);
    if (finished_) return false;
    withdraw(lock);
    finished_ = true;
    return true;
  }

  UcxWorker& worker() const noexcept { return peers_->worker(); }

 private:
  static void on_descriptor(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
    auto* holder = static_cast<std::shared_ptr<ReceiveCore>*>(user_data);
    auto core = std::move(*holder);
    delete holder;
    core->arrived(request, status, info != nullptr ? info->length : 0);
  }

  void arrived(void* request, ucs_status_t status, std::size_t length) {
    std::lock_guard lock(mutex_);
    request_ = nullptr;
    ucp_request_free(request);
    if (finished_) return;  // withdrawn
    if (status != UCS_OK) {
      fail(Error(ErrorCode::backend_failure,
                 fmt::format("receive of {} bytes from peer {} (tag {}) failed: {}", bytes_, site_.peer, tag_,
                             ucs_status_string(status)),
                 site_.context()));
      return;
    }
    Acknowledgement answer{.error = 0, .posted = bytes_};
    if (length != sizeof descriptor_ || descriptor_.bytes != bytes_) {
      answer.error = kSizeDiffers;
      fail(message_of_other_size(site_, tag_, descriptor_.bytes, bytes_));
    } else if (const int failure = read_from(peers_->pid(root_peer_), descriptor_.address, data_, bytes_);
               failure != 0) {
      answer.error = failure;
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
      finished_ = true;
    }
    // UCX may send the acknowledgement only later, under heavy traffic, when this receive has
    // finished and its Work is gone: the bytes it sends live until its callback.
    auto* acknowledgement = new Acknowledgement(answer);
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = [](void* sent, ucs_status_t, void* user_data) {
      delete static_cast<Acknowledgement*>(user_data);
      ucp_request_free(sent);
    };
    param.user_data = acknowledgement;
    auto sent =
        ucp_tag_send_nbx(peers_->endpoint(root_peer_), acknowledgement, sizeof *acknowledgement, ack_tag_, &param);
    if (!UCS_PTR_IS_PTR(sent)) delete acknowledgement;  // sent at once, or failed: no callback follows
  }

  void fail(Error error) {
    failure_ = std::move(error);
    finished_ = true;
  }

  void withdraw(std::unique_lock<std::recursive_mutex>&) {
    if (request_ != nullptr) ucp_request_cancel(peers_->worker().worker(), request_);  // its callback frees it
  }

  std::shared_ptr<UcxPeers> peers_;
  std::shared_ptr<FatalState> fatal_;
  void* data_;
  std::size_t bytes_;
  int root_peer_;
  std::uint64_t ack_tag_;
  CallSite site_;
  int tag_;
  std::recursive_mutex mutex_;  // UCX may call back into the core while a method holds it
  void* request_ = nullptr;
  bool finished_ = false;
  std::optional<Error> failure_;
  Descriptor descriptor_;
  LivenessSchedule liveness_;
};

class SingleCopyReceive final : public WorkState {
 public:
  explicit SingleCopyReceive(std::shared_ptr<ReceiveCore> core, const CallSite& site, int tag, std::size_t bytes)
      : core_(std::move(core)), site_(site), tag_(tag), bytes_(bytes) {}
  ~SingleCopyReceive() override { core_->withdraw(); }

  bool test() override { return core_->test(); }

  void wait_until(Clock::time_point deadline) override {
    if (poll_until([this] { return test(); }, deadline)) return;
    if (!core_->withdraw()) {  // the descriptor came after all: the read is done or failed
      test();
      return;
    }
    throw timed_out(site_, tag_, false, bytes_, started_, deadline);
  }

  bool sleep_until_event(Clock::time_point until) override { return core_->worker().sleep_until_event(until); }

 private:
  std::shared_ptr<ReceiveCore> core_;
  CallSite site_;
  int tag_;
  std::size_t bytes_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace

bool same_host_and_user(const SingleCopyIdentity& a, const SingleCopyIdentity& b) noexcept {
  return a.process.host != 0 && a.process.host == b.process.host &&
         a.process.pid_namespace == b.process.pid_namespace && a.user == b.user;
}

SingleCopyIdentity single_copy_identity() {
  // Yama's ptrace_scope 1 lets a process read only its descendants' memory unless they allow it.
  (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  return {.process = ProcessIdentity::of_this_process(), .user = static_cast<std::uint64_t>(getuid()),
          .probe_address = reinterpret_cast<std::uint64_t>(&probe_word), .threshold = single_copy_threshold()};
}

SingleCopyPlan single_copy_plan(Bootstrap& bootstrap, const std::vector<SingleCopyIdentity>& identities, int self) {
  const auto& mine = identities[static_cast<std::size_t>(self)];
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    if (identities[rank].threshold != mine.threshold) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("MESHCOMM_UCX_SINGLE_COPY_BYTES gives {} bytes on rank {} but {} on rank {}; every "
                              "rank must send large messages the same way",
                              mine.threshold, self, identities[rank].threshold, rank),
                  {.backend = "ucx", .operation = "create", .rank = self, .peer = static_cast<int>(rank)});
    }
  }
  auto same_host = [&](const SingleCopyIdentity& other) { return same_host_and_user(other, mine); };
  char could_read_all = single_copy_allowed() ? 1 : 0;
  for (std::size_t rank = 0; could_read_all != 0 && rank < identities.size(); ++rank) {
    const auto& other = identities[rank];
    if (static_cast<int>(rank) == self || !same_host(other)) continue;
    std::uint64_t value = 0;
    could_read_all = read_from(other.process.pid, other.probe_address, &value, sizeof value) == 0 &&
                     value == kProbeValue;
  }
  const auto flags = bootstrap.all_gather(std::as_bytes(std::span(&could_read_all, 1)));
  SingleCopyPlan plan{.peers = std::vector<char>(identities.size(), 0), .threshold = mine.threshold};
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    plan.peers[rank] = static_cast<int>(rank) != self && same_host(identities[rank]) && could_read_all != 0 &&
                       flags[rank] != std::byte{0};
  }
  return plan;
}

std::shared_ptr<WorkState> start_single_copy_send(const std::shared_ptr<UcxPeers>& peers,
                                                  const std::shared_ptr<FatalState>& fatal, const void* data,
                                                  std::size_t bytes, int root_peer, std::uint64_t descriptor_tag,
                                                  std::uint64_t ack_tag, const CallSite& site, int tag) {
  return std::make_shared<SingleCopySend>(peers, fatal, data, bytes, root_peer, descriptor_tag, ack_tag, site, tag);
}

std::shared_ptr<WorkState> start_single_copy_receive(const std::shared_ptr<UcxPeers>& peers,
                                                     const std::shared_ptr<FatalState>& fatal, void* data,
                                                     std::size_t bytes, int root_peer, std::uint64_t descriptor_tag,
                                                     std::uint64_t ack_tag, const CallSite& site, int tag) {
  auto core = std::make_shared<ReceiveCore>(peers, fatal, data, bytes, root_peer, ack_tag, site, tag);
  core->post(core, descriptor_tag);
  return std::make_shared<SingleCopyReceive>(std::move(core), site, tag, bytes);
}

}  // namespace meshcomm::detail
