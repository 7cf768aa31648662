#pragma once

// Whether the ranks on one host outnumber the cores they may run on. Then a rank that waits
// yields its core from its first idle poll on (yield_when_idle in work_state.hpp): a waiter that
// spins keeps the very rank it waits for off the core. Open MPI does the same when its launcher
// says a node is oversubscribed.

#include <array>
#include <cstdint>
#include <span>

namespace meshcomm::detail {

/// The cores a process may run on (its affinity mask), as plain data that ranks exchange.
struct CoreSet {
  std::array<std::uint64_t, 16> words{};  ///< bit c of the set: core c (cores 0-1023)

  /// This process's cores (sched_getaffinity); every core the system has online if that fails.
  static CoreSet of_this_process();
  /// How many cores the set holds.
  [[nodiscard]] int count() const noexcept;
};

/// Whether `same_host` (one set per rank on one host) names fewer distinct cores than it has
/// ranks.
bool ranks_outnumber_cores(std::span<const CoreSet> same_host) noexcept;

}  // namespace meshcomm::detail
