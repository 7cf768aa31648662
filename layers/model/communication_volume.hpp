#pragma once

#include <cstddef>

#include "meshcomm/communicator.hpp"

namespace meshcomm::layers {

/// Bytes one rank sends, by purpose. Collectives are counted as a ring algorithm sends them
/// (all-reduce 2(P−1)/P·n, all-gather and reduce-scatter (P−1)/P·n of the whole buffer n), the
/// same factors as nccl-tests' bus bandwidth; attention exchanges count what they send.
struct CommunicationVolume {
  std::size_t tensor_parallel = 0;  ///< all-reduces over tp
  std::size_t attention = 0;        ///< the sp exchange (ring, halo, all-to-all, all-gather)
  std::size_t fsdp_gather = 0;      ///< parameter all-gathers
  std::size_t fsdp_reduce = 0;      ///< gradient reduce-scatters
  std::size_t replica_reduce = 0;   ///< gradient all-reduces across replicas

  [[nodiscard]] std::size_t total() const {
    return tensor_parallel + attention + fsdp_gather + fsdp_reduce + replica_reduce;
  }
};

/// Ring-equivalent bytes one rank sends in an all-reduce of `bytes` over `ranks`.
inline std::size_t all_reduce_volume(std::size_t bytes, int ranks) {
  return ranks <= 1 ? 0 : 2 * bytes * static_cast<std::size_t>(ranks - 1) / static_cast<std::size_t>(ranks);
}

/// Ring-equivalent bytes one rank sends in an all-gather or reduce-scatter whose whole buffer is `bytes`.
inline std::size_t gather_volume(std::size_t bytes, int ranks) {
  return ranks <= 1 ? 0 : bytes * static_cast<std::size_t>(ranks - 1) / static_cast<std::size_t>(ranks);
}

/// Sums `data` over `group` in place (and counts it); nothing to do for a group of one.
void all_reduce_sum(Communicator& group, float* data, std::size_t count, std::size_t& volume);

}  // namespace meshcomm::layers
