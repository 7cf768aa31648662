#include "ucx_peers.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "host_cores.hpp"
#include "work_state.hpp"

namespace meshcomm::detail {

namespace {

/// What each rank tells the others first: its context id proposal, its address's length, who
/// it is as a process (for single-copy messages and its pid in errors), and the cores it may run
/// on (whether the ranks of a host outnumber its cores).
struct Introduction {
  std::uint64_t context = 0;
  std::uint64_t address_bytes = 0;
  SingleCopyIdentity identity;
  CoreSet cores;
};

}  // namespace

void UcxPeers::on_endpoint_error(void* slot, ucp_ep_h /*endpoint*/, ucs_status_t status) {
  static_cast<std::atomic<ucs_status_t>*>(slot)->store(status == UCS_OK ? UCS_ERR_CONNECTION_RESET : status,
                                                      std::memory_order_release);
}

UcxPeers::UcxPeers(std::shared_ptr<UcxWorker> worker, Bootstrap& bootstrap, std::uint32_t& context)
    : worker_(std::move(worker)) {
  const ErrorContext where{.backend = "ucx", .operation = "create", .rank = bootstrap.rank()};
  const auto ranks = static_cast<std::size_t>(bootstrap.size());
  const Introduction mine{.context = worker_->propose_context(), .address_bytes = worker_->address().size(),
                          .identity = single_copy_identity(), .cores = CoreSet::of_this_process()};
  const auto introductions = bootstrap.all_gather(std::as_bytes(std::span(&mine, 1)));
  std::vector<Introduction> all(ranks);
  std::memcpy(all.data(), introductions.data(), introductions.size());
  std::uint64_t longest = 0, agreed = 0;
  std::vector<SingleCopyIdentity> identities;
  for (const auto& other : all) {
    longest = std::max(longest, other.address_bytes);
    agreed = std::max(agreed, other.context);
    identities.push_back(other.identity);
    pids_.push_back(other.identity.process.pid);
    processes_.push_back(other.identity.process);
  }
  const auto& self = identities[static_cast<std::size_t>(bootstrap.rank())];
  std::vector<CoreSet> host_cores;
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    same_host_.push_back(same_host_and_user(identities[rank], self));
    if (same_host_.back() != 0) host_cores.push_back(all[rank].cores);
  }
  // UCX's shared-memory transports move a message only while both processes run.
  ranks_share_cores_ = ranks_outnumber_cores(host_cores);
  if (ranks_share_cores_) yield_when_idle();
  // Collective too (probes, then one agreement), and before any endpoint exists to leak if it throws.
  single_copy_ = single_copy_plan(bootstrap, identities, bootstrap.rank());
  context = static_cast<std::uint32_t>(agreed);
  worker_->take_context(context);
  // Addresses differ in length between processes; the bootstrap gathers equal sizes.
  std::vector<std::byte> padded(longest);
  std::memcpy(padded.data(), worker_->address().data(), worker_->address().size());
  const auto addresses = bootstrap.all_gather(padded);
  failures_ = std::make_unique<std::atomic<ucs_status_t>[]>(ranks);
  ended_ = std::make_unique<std::atomic<bool>[]>(ranks);
  payload_awaited_ = std::make_unique<std::atomic<bool>[]>(ranks);
  large_sends_to_ = std::make_unique<std::atomic<std::uint64_t>[]>(ranks);
  endpoints_.assign(ranks, nullptr);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    failures_[rank].store(UCS_OK);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address = reinterpret_cast<const ucp_address_t*>(addresses.data() + rank * longest);
    if (worker_->peer_errors()) {
      params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
      params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      params.err_handler.cb = &UcxPeers::on_endpoint_error;
      params.err_handler.arg = &failures_[rank];
    }
    ucp_ep_h endpoint = nullptr;
    if (const auto status = ucp_ep_create(worker_->worker(), &params, &endpoint); status != UCS_OK) {
      auto failed_at = where;
      failed_at.peer = static_cast<int>(rank);
      failed_at.native_code = static_cast<int>(status);
      throw Error(ErrorCode::backend_failure,
                  fmt::format("connecting to rank {} failed: {} (ucp_ep_create); it may have exited while the "
                              "communicator was made",
                              rank, ucs_status_string(status)),
                  failed_at);
    }
    endpoints_[rank] = endpoint;
  }
}

bool UcxPeers::look_at_process(int root_rank) noexcept {
  const auto index = static_cast<std::size_t>(root_rank);
  if (failed(root_rank)) return true;
  if (!has_ended(processes_[index])) return false;
  ended_[index].store(true, std::memory_order_release);
  ucs_status_t expected = UCS_OK;
  failures_[index].compare_exchange_strong(expected, UCS_ERR_CONNECTION_RESET);
  return true;
}

std::string UcxPeers::failure_text(int root_rank, int peer) const {
  if (ended_[static_cast<std::size_t>(root_rank)].load(std::memory_order_acquire)) {
    return fmt::format("peer {} (pid {} on this host) has ended", peer, pids_[static_cast<std::size_t>(root_rank)]);
  }
  return fmt::format("UCX reports peer {} failed ({})", peer, ucs_status_string(failure(root_rank)));
}

UcxPeers::~UcxPeers() {
  // Close every endpoint at once, then progress until UCX has released them (bounded).
  std::vector<void*> closing;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  for (auto endpoint : endpoints_) {
    if (endpoint == nullptr) continue;
    void* request = ucp_ep_close_nbx(endpoint, &param);
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  }
  const auto deadline = deadline_after(std::chrono::milliseconds(1000));
  for (auto* request : closing) {
    while (ucp_request_check_status(request) == UCS_INPROGRESS && Clock::now() < deadline) worker_->progress();
    ucp_request_free(request);
  }
}

}  // namespace meshcomm::detail
