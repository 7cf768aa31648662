#include "torch_work.hpp"

#include <fmt/format.h>

#include "call_queue.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::torch_plugin {

TorchWork::TorchWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<CallQueue> queue)
    : c10d::Work(rank, type),
      type_(type),
      outputs_(std::move(outputs)),
      queue_(std::move(queue)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

bool TorchWork::wait(std::chrono::milliseconds timeout) {
  const auto deadline = timeout.count() > 0 ? std::chrono::steady_clock::now() + timeout
                                            : std::chrono::steady_clock::time_point::max();
  if (const auto queue = queue_.lock()) {
    // Drive the calls here rather than wait for the worker to see the end and wake this thread.
    const CallQueue::Waiter waiter(*queue);
    PollBackoff backoff;
    FineTimerSlack slack;
    while (!c10d::Work::isCompleted() && std::chrono::steady_clock::now() < deadline) {
      const auto nap = backoff.after(queue->drive());
      if (nap.count() == 0) continue;
      slack.use();
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, nap, [&] { return completed_; });
    }
  }
  {
    std::unique_lock lock(mutex_);
    if (timeout.count() <= 0) {
      cv_.wait(lock, [&] { return completed_; });
    } else if (!cv_.wait_until(lock, deadline, [&] { return completed_; })) {
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

bool TorchWork::isCompleted() {
  if (const auto queue = queue_.lock()) (void)queue->drive();
  return c10d::Work::isCompleted();
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
