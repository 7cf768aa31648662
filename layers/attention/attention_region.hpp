#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace meshcomm::layers {

/// The rectangle of one block-attention call worth computing: query rows [query_begin,
/// query_end) against key rows [key_begin, key_end). Everything outside it is masked; inside it
/// the mask still applies element by element.
struct AttentionRegion {
  std::size_t query_begin = 0;
  std::size_t query_end = 0;
  std::size_t key_begin = 0;
  std::size_t key_end = 0;

  [[nodiscard]] bool empty() const noexcept { return query_begin >= query_end || key_begin >= key_end; }
  [[nodiscard]] std::size_t query_rows() const noexcept { return empty() ? 0 : query_end - query_begin; }
  [[nodiscard]] std::size_t key_rows() const noexcept { return empty() ? 0 : key_end - key_begin; }
};

/// The smallest region covering every visible query-key pair: everything when not `causal`; with
/// `causal` (a query sees keys at positions <= its own), the queries that see some key and the
/// keys that some query sees. For zigzag and contiguous layouts (positions ascending) this is
/// exactly the visible part: all, nothing, a half, or the diagonal block. Empty if nothing is
/// visible.
AttentionRegion visible_region(std::span<const std::int64_t> query_positions,
                               std::span<const std::int64_t> key_positions, bool causal);

}  // namespace meshcomm::layers
