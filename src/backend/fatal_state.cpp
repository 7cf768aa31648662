#include "backend.hpp"

#include <fmt/format.h>

namespace meshcomm::detail {

void FatalState::set(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
  is_set_.store(true, std::memory_order_release);
}

namespace {

Error aborted(ErrorContext context, std::string_view outcome, const Error& first) {
  std::string message = "the communicator is unusable after an earlier fatal error";
  if (!outcome.empty()) message += "; " + std::string(outcome);
  message += "; destroy it and create a new one. The first error was: " + std::string(first.what());
  return Error(ErrorCode::aborted, std::move(message), std::move(context));
}

}  // namespace

std::string withdrawal_outcome(bool is_send, std::size_t bytes, int peer, bool withdrawn) {
  const auto transfer = is_send ? fmt::format("send of {} bytes to peer {}", bytes, peer)
                                : fmt::format("receive of {} bytes from peer {}", bytes, peer);
  if (withdrawn) return fmt::format("this {} was withdrawn", transfer);
  return fmt::format("the engine could not withdraw this {}: its buffer must stay valid until the process ends",
                     transfer);
}

Error FatalState::aborted_error(ErrorContext context, std::string_view outcome) const {
  std::lock_guard lock(mutex_);
  return aborted(std::move(context), outcome, *error_);
}

void FatalState::throw_set(const char* operation) const {
  std::lock_guard lock(mutex_);
  ErrorContext context = error_->context();
  context.operation = std::string(operation);
  throw aborted(std::move(context), {}, *error_);
}

}  // namespace meshcomm::detail
