#pragma once

#include "ring.hpp"

namespace meshcomm::detail {

/// Pairwise exchange, step s in [1, size): send to rank + s, receive from rank - s.
constexpr int pairwise_send_peer(int rank, int size, int step) noexcept { return wrap_rank(rank + step, size); }
constexpr int pairwise_recv_peer(int rank, int size, int step) noexcept { return wrap_rank(rank - step, size); }

/// Rounds of a swap schedule, in which every two ranks swap once, each round pairing ranks
/// with each other (a round-robin tournament): size - 1 rounds for an even size, size for an odd
/// one (each rank then sits out one round).
constexpr int swap_rounds(int size) noexcept { return size % 2 == 0 ? size - 1 : size; }

/// The rank that `rank` swaps with in `round` of swap_rounds(size), or -1 when it sits out.
/// Symmetric: swap_peer(swap_peer(r, n, k), n, k) == r. Odd sizes pair r with (k - r) mod n;
/// even sizes do that among the first n - 1 ranks and give the last rank to whoever would be
/// left alone.
constexpr int swap_peer(int rank, int size, int round) noexcept {
  const bool even = size % 2 == 0;
  const int circle = even ? size - 1 : size;
  if (even && rank == size - 1) return wrap_rank(round * (size / 2), circle);  // r with 2r = round
  const int peer = wrap_rank(round - rank, circle);
  if (peer != rank) return peer;
  return even ? size - 1 : -1;
}

}  // namespace meshcomm::detail
