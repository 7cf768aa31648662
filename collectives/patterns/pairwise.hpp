#pragma once

#include "ring.hpp"

namespace meshcomm::detail {

/// Pairwise exchange, step s in [1, size): send to rank + s, receive from rank - s.
constexpr int pairwise_send_peer(int rank, int size, int step) noexcept { return wrap_rank(rank + step, size); }
constexpr int pairwise_recv_peer(int rank, int size, int step) noexcept { return wrap_rank(rank - step, size); }

}  // namespace meshcomm::detail
