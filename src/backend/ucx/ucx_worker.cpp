#include "ucx_worker.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "environment.hpp"
#include "work_state.hpp"

namespace meshcomm::detail {

void check_ucs(ucs_status_t status, const char* call, const ErrorContext& context) {
  if (status == UCS_OK) return;
  ErrorContext with_code = context;
  with_code.native_code = static_cast<int>(status);
  throw Error(ErrorCode::backend_failure, fmt::format("{} failed: {}", call, ucs_status_string(status)),
              std::move(with_code));
}

namespace {

const ErrorContext kSetup{.backend = "ucx", .operation = "create"};

/// MESHCOMM_UCX_ERROR_MODE: "peer" (default) or "none".
bool peer_error_mode() {
  const auto mode = environment_variable("MESHCOMM_UCX_ERROR_MODE");
  if (!mode || mode->empty() || *mode == "peer") return true;
  if (*mode == "none") return false;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_UCX_ERROR_MODE = '{}' is not an error mode; valid: peer (report failed peers, the "
                          "default) or none",
                          *mode),
              kSetup);
}

}  // namespace

std::shared_ptr<UcxWorker> UcxWorker::instance() {
  static std::mutex mutex;
  static std::weak_ptr<UcxWorker> shared;
  std::lock_guard lock(mutex);
  if (auto existing = shared.lock()) return existing;
  std::shared_ptr<UcxWorker> made(new UcxWorker());
  shared = made;
  return made;
}

UcxWorker::UcxWorker() {
  peer_errors_ = peer_error_mode();
  ucp_config_t* config = nullptr;
  check_ucs(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read", kSetup);
  if (peer_errors_) {
    // Peer error handling would otherwise drop the shared-memory transports.
    (void)ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
    const auto keepalive = environment_variable("MESHCOMM_UCX_KEEPALIVE");
    const std::string interval = keepalive && !keepalive->empty() ? std::string(*keepalive) : "1s";
    if (const auto status = ucp_config_modify(config, "KEEPALIVE_INTERVAL", interval.c_str()); status != UCS_OK) {
      ucp_config_release(config);
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("MESHCOMM_UCX_KEEPALIVE = '{}' is not a UCX time interval (for example 1s, 500ms): {}",
                              interval, ucs_status_string(status)),
                  kSetup);
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  const auto initialised = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check_ucs(initialised, "ucp_init", kSetup);
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_MULTI;  // progress threads drive it too
  if (const auto status = ucp_worker_create(context_, &worker_params, &worker_); status != UCS_OK) {
    ucp_cleanup(context_);
    check_ucs(status, "ucp_worker_create", kSetup);
  }
  if (ucp_worker_get_efd(worker_, &event_fd_) != UCS_OK) event_fd_ = -1;  // progress threads poll instead
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check_ucs(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address", kSetup);
  address_.resize(length);
  std::memcpy(address_.data(), address, length);
  ucp_worker_release_address(worker_, address);
  hook_ = std::make_unique<ProgressHook>([this] {
    (void)progress();
    answers_.deliver_all();
  });
}

unsigned UcxWorker::progress() noexcept {
  const unsigned events = ucp_worker_progress(worker_);
  if (events > 0) note_progress();
  return events;
}

UcxWorker::~UcxWorker() {
  hook_.reset();  // before the worker it drives
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

bool UcxWorker::sleep_until_event(std::chrono::steady_clock::time_point until) noexcept {
  if (event_fd_ < 0) return false;
  if (!answers_.empty()) return true;  // the caller's wait delivers them first
  const auto status = ucp_worker_arm(worker_);
  if (status == UCS_ERR_BUSY) return true;  // events are pending: progress them first
  if (status != UCS_OK) return false;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  pollfd wakeup{.fd = event_fd_, .events = POLLIN, .revents = 0};
  (void)poll(&wakeup, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
  return true;
}

std::uint32_t UcxWorker::propose_context(std::uint32_t at_least) noexcept {
  return std::max(next_context_.load(), at_least);
}

void UcxWorker::take_context(std::uint32_t context) noexcept {
  std::uint32_t current = next_context_.load();
  while (current <= context && !next_context_.compare_exchange_weak(current, context + 1)) {
  }
}

}  // namespace meshcomm::detail
