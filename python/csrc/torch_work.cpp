#include "torch_work.hpp"

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::torch_plugin {

TorchWork::TorchWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type), type_(type), outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

bool TorchWork::wait(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(mutex_);
    if (timeout.count() <= 0) {
      cv_.wait(lock, [&] { return completed_; });
    } else if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
      throw Error(ErrorCode::timeout,
                  fmt::format("{} did not complete within the {} ms given to wait(); it stays pending (its own "
                              "timeout is the process group's)",
                              c10d::opTypeToString(type_), timeout.count()),
                  {.backend = "meshcomm (torch)", .operation = c10d::opTypeToString(type_)});
    }
    if (exception_) std::rethrow_exception(exception_);
  }
  return true;
}

void TorchWork::complete(std::exception_ptr error) {
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace meshcomm::torch_plugin
