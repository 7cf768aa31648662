#pragma once

// The order in which a perftest's variants take their turns: drawn afresh for every turn.

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "meshcomm/communicator.hpp"

namespace meshcomm::perf {

/// The order in which `count` variants run in turn `repeat` of a run whose ranks share `seed`: a
/// permutation drawn afresh for each turn, alike on every rank. Run in one fixed order, a variant
/// always finds the caches, the pages and the peer's state as the same predecessor left them.
/// Rows of a Williams square, used before, put each variant after each other once, but always
/// two turns after the same one (its neighbour in the list): two columns of the same code on the
/// same buffers (`--algo auto,eager`, two ranks, 16 MiB, sixteen columns) then differed by 3-10%
/// in place, the later listed one slower, and as much the other way with the list reversed. The
/// same drawn orders in every launch left 3% of it (a fixed seed), so each run draws its seed
/// (shared_turn_seed()).
inline std::vector<std::size_t> turn_order(std::uint64_t seed, int repeat, std::size_t count) {
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // The standard fixes mt19937_64's output, and the shuffle below uses nothing else.
  std::mt19937_64 draw(seed + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(repeat) + 1));
  for (std::size_t left = count; left > 1; --left) std::swap(order[left - 1], order[draw() % left]);
  return order;
}

/// A seed for turn_order() drawn by rank 0 of `comm` and given to every rank (a collective: every
/// rank calls it, in the same place; a sum, as the perftests' other host reductions, where the
/// other ranks add nothing).
inline std::uint64_t shared_turn_seed(Communicator& comm) {
  std::uint64_t drawn = 0;
  if (comm.rank() == 0) drawn = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  std::uint64_t seed = 0;
  comm.all_reduce(ConstBufferView(&drawn, 1, DataType::u64), BufferView(&seed, 1, DataType::u64)).wait();
  return seed;
}

}  // namespace meshcomm::perf
