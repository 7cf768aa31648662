#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/export.hpp"

namespace meshcomm {

/// A bootstrap over the launcher's PMIx server: `srun --mpi=pmix`, `prterun`, and Open MPI's
/// `mpirun`, without MPI being initialised. The ranks are the PMIx job's; each exchange publishes
/// this rank's bytes under a key of its own and reads every other rank's, so a rank that never
/// publishes is named when the exchange times out. Communicators created from it use the ucx
/// backend by default.
class MESHCOMM_API PmixBootstrap final : public Bootstrap {
 public:
  /// Connects to the PMIx server; throws Error(unsupported) if this build has no PMIx, and
  /// Error(backend_failure) if no PMIx server started this process (saying which launchers
  /// provide one). `timeout` bounds each exchange (zero: `MESHCOMM_TIMEOUT`, else 300 s).
  explicit PmixBootstrap(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
  ~PmixBootstrap() override;

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] std::string_view name() const noexcept override { return "pmix"; }
  [[nodiscard]] std::string description() const override;
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

  /// The timeout of its exchanges.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  class Session;
  std::unique_ptr<Session> session_;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
  std::uint64_t round_ = 0;
};

}  // namespace meshcomm
