#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/export.hpp"

namespace meshcomm {

namespace detail {
class StarExchange;
}

/// A bootstrap from the environment torchrun and `accelerate launch` give each process:
/// `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`. Rank 0 listens on a port of
/// its own, not torch's store: `MESHCOMM_BOOTSTRAP_PORT` if set, else `MASTER_PORT + 1`; every
/// other rank connects to it at `MASTER_ADDR` and each exchange goes through rank 0, which names
/// the ranks that never arrived when one times out. Communicators created from it use the ucx
/// backend by default, so a C or C++ program started by torchrun needs no MPI.
class MESHCOMM_API EnvBootstrap final : public Bootstrap {
 public:
  /// Reads the environment (rank 0 starts listening); throws Error(invalid_argument) naming a
  /// variable that is missing or out of range. `timeout` bounds each exchange, connecting
  /// included (zero: `MESHCOMM_TIMEOUT`, else 300 s).
  explicit EnvBootstrap(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
  ~EnvBootstrap() override;

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] std::string_view name() const noexcept override { return "env"; }
  [[nodiscard]] std::string description() const override;
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

  /// `LOCAL_RANK` (this process's index on its node), or the rank if it is not set.
  [[nodiscard]] int local_rank() const noexcept { return local_rank_; }
  /// Where rank 0 listens.
  [[nodiscard]] const std::string& address() const noexcept { return address_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// The timeout of its exchanges.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  std::string address_;
  std::uint16_t port_ = 0;
  std::string port_source_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<detail::StarExchange> exchange_;
};

}  // namespace meshcomm
