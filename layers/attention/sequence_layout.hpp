#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace meshcomm::layers {

/// How a sequence is cut across the ranks of a ring.
enum class SequenceLayout : std::uint8_t {
  contiguous,  ///< rank r holds rows [r S/P, (r+1) S/P)
  zigzag,      ///< rank r holds chunks r and 2P-1-r of 2P: equal causal work on every rank
};

/// "contiguous" or "zigzag".
std::string_view to_string(SequenceLayout layout) noexcept;

/// Global positions of the rows `rank` holds, in its local order. Throws Error(invalid_argument)
/// if `sequence` is not divisible by P (contiguous) or 2P (zigzag), saying what to pad it to.
std::vector<std::int64_t> layout_positions(SequenceLayout layout, std::size_t sequence, int ranks, int rank);

/// The positions of every rank's rows, rank after rank: the row order of an all-gather over the
/// ring, or of the sequence after a head all-to-all.
std::vector<std::int64_t> all_rank_positions(SequenceLayout layout, std::size_t sequence, int ranks);

/// Copies the rows of `rank` out of a whole [sequence, row_elements] tensor, in local order.
std::vector<float> reorder_rows(const std::vector<float>& whole, std::size_t row_elements,
                                const std::vector<std::int64_t>& positions);

/// Writes local rows back to their places in a whole tensor (the inverse of reorder_rows).
void restore_rows(const std::vector<float>& local, std::size_t row_elements,
                  const std::vector<std::int64_t>& positions, std::vector<float>& whole);

}  // namespace meshcomm::layers
