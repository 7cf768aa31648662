#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string_view>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// A fatal error shared by a backend and its in-flight operations: once set, every later
/// operation fails fast with it and the communicator must be recreated.
class FatalState {
 public:
  void set(const Error& error);
  /// Throws Error(aborted) carrying the first fatal error's message, if there was one. Called
  /// before every operation, so the usual answer (none) takes one atomic load and no lock.
  void throw_if_set(const char* operation) const {
    if (is_set()) throw_set(operation);
  }
  /// Whether a fatal error was set (one atomic load): pending operations check it as they are
  /// tested, so that they fail too (Communicator::abort).
  [[nodiscard]] bool is_set() const noexcept { return is_set_.load(std::memory_order_acquire); }
  /// The Error(aborted) of a pending operation (`context`) once the state is set: what became
  /// of it ("this receive ... was withdrawn") and the first error's message.
  [[nodiscard]] Error aborted_error(ErrorContext context, std::string_view outcome) const;

 private:
  [[noreturn]] void throw_set(const char* operation) const;

  std::atomic<bool> is_set_{false};
  mutable std::mutex mutex_;
  std::optional<Error> error_;
};

}  // namespace meshcomm::detail
