#pragma once

namespace meshcomm::detail {

constexpr bool is_power_of_two(int value) noexcept { return value > 0 && (value & (value - 1)) == 0; }

/// The largest power of two not above `value` (value >= 1).
constexpr int power_of_two_floor(int value) noexcept {
  int power = 1;
  while (power * 2 <= value) power *= 2;
  return power;
}

/// Number of rounds of recursive doubling over `size` (a power of two) ranks.
constexpr int doubling_rounds(int size) noexcept {
  int rounds = 0;
  while ((1 << rounds) < size) ++rounds;
  return rounds;
}

/// The partner of `rank` in `round`: the rank that differs in bit `round`.
constexpr int doubling_peer(int rank, int round) noexcept { return rank ^ (1 << round); }

/// First block a rank holds before recursive-doubling all-gather round `round`: the blocks
/// [first, first + 2^round) of its aligned group.
constexpr int doubling_group_first(int rank, int round) noexcept { return (rank >> round) << round; }

/// Round `round` of recursive halving over `size` (a power of two) ranks: `rank` and `peer` share
/// a range of 2 * `span` blocks; each keeps the half that holds its own block, sends the other
/// half to its peer and reduces what the peer sends of the kept half.
struct HalvingRound {
  int peer = 0;
  int span = 0;         // blocks in each half
  int kept_first = 0;   // first block of the half this rank keeps
  int given_first = 0;  // first block of the half it sends
};

constexpr HalvingRound halving_round(int rank, int size, int round) noexcept {
  const int span = size >> (round + 1);
  const int low = (rank / (2 * span)) * (2 * span);
  const bool keep_low = rank < low + span;
  return {.peer = rank ^ span,
          .span = span,
          .kept_first = keep_low ? low : low + span,
          .given_first = keep_low ? low + span : low};
}

}  // namespace meshcomm::detail
