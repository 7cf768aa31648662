#pragma once

#include <cstddef>

namespace meshcomm::detail {

/// A contiguous range of elements.
struct Block {
  std::size_t offset = 0;
  std::size_t count = 0;
};

/// Block `index` of `total` elements cut into `parts` nearly equal blocks: the first
/// `total % parts` blocks hold one element more.
constexpr Block block_of(std::size_t total, int parts, int index) noexcept {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = total / p;
  const std::size_t extra = total % p;
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

}  // namespace meshcomm::detail
