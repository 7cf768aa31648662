#pragma once

#include <vector>

namespace meshcomm::detail {

/// Binomial-tree broadcast over ranks relative to the root (`relative` = rank - root mod size).
/// The parent of a non-root: `relative` with its lowest set bit cleared.
constexpr int binomial_parent(int relative) noexcept { return relative & (relative - 1); }

/// The children of `relative`, largest subtree first: relative + 2^k for every 2^k below its
/// lowest set bit (every 2^k for the root) that stays inside `size`.
inline std::vector<int> binomial_children(int relative, int size) {
  std::vector<int> children;
  int limit = relative == 0 ? 1 : (relative & -relative);
  if (relative == 0) {
    while (limit < size) limit <<= 1;
  }
  for (int step = limit >> 1; step >= 1; step >>= 1) {
    if (relative + step < size) children.push_back(relative + step);
  }
  return children;
}

}  // namespace meshcomm::detail
