#pragma once

#include "ring.hpp"

namespace meshcomm::detail {

/// Pairwise exchange, step s in [1, size): send to rank + s, receive from rank - s.
constexpr int pairwise_send_peer(int rank, int size, int step) noexcept { return wrap_rank(rank + step, size); }
constexpr int pairwise_recv_peer(int rank, int size, int step) noexcept { return wrap_rank(rank - step, size); }

/// One half of a step of a neighbour-trade schedule, an all-to-all in place: in step k in [1,
/// size / 2] a rank trades blocks with the ranks k after and k before it, in two halves. First
/// it copies the block for the rank after aside and receives that rank's block into its place,
/// while it sends the rank before its block from the buffer itself; then it receives the rank
/// before's block into the place it has just sent from, while it sends the copy to the rank
/// after. Where the two are one rank (k = size / 2 at even sizes) the first half is a swap (the
/// copy goes at once) and the second does nothing. Each half's sends meet receives of the same
/// half, so no half waits for a later one.
struct TradeHalf {
  int copy_aside = -1;    ///< the peer whose block goes aside before anything else, or -1
  int receive_from = -1;  ///< the peer whose block comes into its own place, or -1
  int send_to = -1;       ///< the peer sent a block, or -1
  bool send_aside = false;  ///< the block sent is the copy aside, else send_to's block in the buffer
};

/// Halves of a neighbour-trade schedule among `size` ranks.
constexpr int trade_halves(int size) noexcept { return 2 * (size / 2); }

/// What `rank` does in `half` of a neighbour-trade schedule among `size` ranks.
constexpr TradeHalf trade_half(int rank, int size, int half) noexcept {
  const int distance = half / 2 + 1;
  const int after = wrap_rank(rank + distance, size);
  const int before = wrap_rank(rank - distance, size);
  if (half % 2 == 0) {
    const bool swap = before == after;
    return {.copy_aside = after, .receive_from = after, .send_to = swap ? after : before, .send_aside = swap};
  }
  if (before == after) return {};
  return {.receive_from = before, .send_to = after, .send_aside = true};
}

}  // namespace meshcomm::detail
