#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "../backend.hpp"

namespace meshcomm::detail {

/// One request of an MPI collective (native collectives, neighbourhood exchanges), what must
/// stay alive until it completes, and what to do then. A collective request cannot be cancelled,
/// so a timeout makes the communicator fatal.
class MpiCollectiveRequest final : public WorkState {
 public:
  MpiCollectiveRequest(ErrorContext context, std::shared_ptr<FatalState> fatal)
      : context_(std::move(context)), fatal_(std::move(fatal)) {}

  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<int> counts;          ///< int arrays MPI reads (all_to_allv)
  std::vector<std::byte> scratch;   ///< copies MPI reads from
  std::function<void()> after;      ///< runs once on completion

  bool test() override;
  void wait_until(Clock::time_point deadline) override;
  /// It marks the communicator fatal itself when MPI fails it or it times out.
  [[nodiscard]] bool fails_communicator() const noexcept override { return true; }
  [[nodiscard]] const ErrorContext& context() const noexcept { return context_; }

 private:
  ErrorContext context_;
  std::shared_ptr<FatalState> fatal_;
  bool done_ = false;
};

}  // namespace meshcomm::detail
