#include "backend.hpp"

namespace meshcomm::detail {

void FatalState::set(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
  is_set_.store(true, std::memory_order_release);
}

void FatalState::throw_set(const char* operation) const {
  std::lock_guard lock(mutex_);
  ErrorContext context = error_->context();
  context.operation = std::string(operation);
  throw Error(ErrorCode::aborted,
              "the communicator is unusable after an earlier fatal error; destroy it and create a new one. "
              "The first error was: " +
                  std::string(error_->what()),
              context);
}

}  // namespace meshcomm::detail
