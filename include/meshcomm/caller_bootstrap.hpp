#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/export.hpp"

namespace meshcomm {

/// The caller's own exchange, started and then polled (as UCC's `ucc_oob_coll_t`), so that
/// meshcomm can bound each wait: what a framework with a store of its own passes.
struct CallerExchange {
  int rank = -1;  ///< this rank, in [0, size)
  int size = 0;   ///< number of ranks
  /// Starts gathering `mine` from every rank into `gathered` (rank order, `mine.size()` bytes
  /// each); returns a request, or nullptr if it could not start.
  std::function<void*(std::span<const std::byte> mine, std::span<std::byte> gathered)> start_all_gather;
  /// Optional: starts a barrier; without it, a barrier is an all-gather of one byte.
  std::function<void*()> start_barrier;
  /// 1 once `request` is complete, 0 while it is in progress, negative if it failed.
  std::function<int(void* request)> test;
  /// Releases `request`: after it completed, failed, or timed out (then possibly still running).
  std::function<void(void* request)> release;
  /// Optional: the ranks that have not joined `request` yet, for the timeout's message.
  std::function<std::vector<int>(void* request)> missing;
  /// Bound of each exchange; zero: `MESHCOMM_TIMEOUT`, else 300 s.
  std::chrono::milliseconds timeout{0};
};

/// A bootstrap over a `CallerExchange`. Communicators created from it use the ucx backend by
/// default. Each exchange polls the caller's request until it completes or the timeout passes,
/// then names the ranks that never arrived where `missing` can tell.
class MESHCOMM_API CallerBootstrap final : public Bootstrap {
 public:
  /// Throws Error(invalid_argument) naming a field that is missing or out of range.
  explicit CallerBootstrap(CallerExchange exchange);

  [[nodiscard]] int rank() const noexcept override { return exchange_.rank; }
  [[nodiscard]] int size() const noexcept override { return exchange_.size; }
  [[nodiscard]] std::string_view name() const noexcept override { return "caller"; }
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

 private:
  /// Polls `request` of `operation` to completion within the timeout, then releases it.
  void complete(void* request, const char* operation);
  CallerExchange exchange_;
};

}  // namespace meshcomm
