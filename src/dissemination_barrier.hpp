#pragma once

#include <memory>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// Number of rounds of a dissemination barrier over `size` ranks: ceil(log2(size)).
int dissemination_rounds(int size) noexcept;
/// The peer `rank` signals in `round`: (rank + 2^round) mod size.
int dissemination_send_peer(int rank, int size, int round) noexcept;
/// The peer `rank` hears from in `round`: (rank - 2^round) mod size.
int dissemination_recv_peer(int rank, int size, int round) noexcept;

/// Starts a dissemination barrier of zero-byte messages on the internal lane.
/// `tag`: one reserved when the enclosing operation started, for a barrier started later from
/// its progress (-1: reserve one now).
std::shared_ptr<WorkState> start_dissemination_barrier(CommunicatorImpl& comm, OperationLabel label, int tag = -1);

}  // namespace meshcomm::detail
