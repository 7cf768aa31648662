#include "backend.hpp"

namespace meshcomm::detail {

void FatalState::set(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
}

void FatalState::throw_if_set(std::string_view operation) const {
  std::lock_guard lock(mutex_);
  if (!error_) return;
  ErrorContext context = error_->context();
  context.operation = std::string(operation);
  throw Error(ErrorCode::aborted,
              "the communicator is unusable after an earlier fatal error; destroy it and create a new one. "
              "The first error was: " +
                  std::string(error_->what()),
              context);
}

}  // namespace meshcomm::detail
