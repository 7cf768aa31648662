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

/// Blocks [first, first + blocks) of `total` elements cut into `parts` nearly equal blocks, as
/// one range (block `parts` starts at `total`).
constexpr Block blocks_of(std::size_t total, int parts, int first, int blocks) noexcept {
  const std::size_t begin = block_of(total, parts, first).offset;
  return {begin, block_of(total, parts, first + blocks).offset - begin};
}

}  // namespace meshcomm::detail
