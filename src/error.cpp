#include "meshcomm/error.hpp"

#include <fmt/format.h>

#include <atomic>

#include "failure_seen.hpp"

namespace meshcomm {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::size_mismatch: return "size_mismatch";
    case ErrorCode::peer_failure: return "peer_failure";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::backend_failure: return "backend_failure";
    case ErrorCode::aborted: return "aborted";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

namespace {

std::atomic<bool> failure_was_seen{false};

bool may_mean_a_peer_is_gone(ErrorCode code) noexcept {
  return code == ErrorCode::timeout || code == ErrorCode::peer_failure || code == ErrorCode::backend_failure ||
         code == ErrorCode::aborted;
}

std::string describe(ErrorCode code, const std::string& message, const ErrorContext& context) {
  std::string where;
  auto add = [&where](const std::string& part) { where += where.empty() ? part : ", " + part; };
  if (!context.operation.empty()) add(context.operation);
  if (!context.backend.empty()) add("backend " + context.backend);
  if (context.rank >= 0) add(fmt::format("rank {}", context.rank));
  if (context.peer >= 0) add(fmt::format("peer {}", context.peer));
  if (context.sequence >= 0) add(fmt::format("seq {}", context.sequence));
  if (context.native_code != 0) add(fmt::format("native code {}", context.native_code));
  if (where.empty()) return fmt::format("meshcomm {}: {}", to_string(code), message);
  return fmt::format("meshcomm {} ({}): {}", to_string(code), where, message);
}

}  // namespace

namespace detail {
bool failure_seen() noexcept { return failure_was_seen.load(std::memory_order_relaxed); }
}  // namespace detail

Error::Error(ErrorCode code, std::string message, ErrorContext context)
    : std::runtime_error(describe(code, message, context)),
      code_(code),
      context_(std::move(context)),
      message_(std::move(message)) {
  if (may_mean_a_peer_is_gone(code)) failure_was_seen.store(true, std::memory_order_relaxed);
}

}  // namespace meshcomm
