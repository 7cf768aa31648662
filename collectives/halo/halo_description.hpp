#pragma once

// What HaloPlan::describe says: the plan's strategy, backend, neighbours and bytes, and, for
// rma, which way its starts have moved their rows so far (the path is chosen per start, from
// whether the buffer passed came from Communicator::allocate_shared).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "meshcomm/communicator.hpp"
#include "meshcomm/halo.hpp"

namespace meshcomm::detail {

/// The fixed facts of one plan on one rank.
struct HaloPlanFacts {
  HaloStrategy strategy = HaloStrategy::p2p;
  BackendKind backend = BackendKind::mpi;
  MemoryKind memory = MemoryKind::host;
  bool through_ipc = false;  ///< CUDA buffers moved through CUDA IPC (mpi backend)
  int ranks = 1;
  int rank = 0;
  std::size_t send_peers = 0;
  std::size_t receive_peers = 0;
  std::size_t bytes_sent = 0;      ///< per start, forward
  std::size_t bytes_received = 0;  ///< per start, forward
};

/// How an rma plan's starts have moved their rows, counted as they start (any thread).
struct RmaPathCounts {
  std::atomic<std::uint64_t> forward_into_rows{0};      ///< halo rows put straight into this rank's mapped buffer
  std::atomic<std::uint64_t> forward_through_inbox{0};  ///< halo rows put into the plan's inbox, copied from there
  std::atomic<std::uint64_t> adjoint_offered{0};        ///< gradients offered for same-host owners to read
  std::atomic<std::uint64_t> adjoint_put{0};            ///< gradients put into the owners' inboxes
};

/// One paragraph: the facts, then (rma) the paths taken so far and why.
std::string describe_halo_plan(const HaloPlanFacts& facts, const RmaPathCounts& paths);

}  // namespace meshcomm::detail
