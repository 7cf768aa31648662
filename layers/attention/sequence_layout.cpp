#include "sequence_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::layers {

std::string_view to_string(SequenceLayout layout) noexcept {
  return layout == SequenceLayout::zigzag ? "zigzag" : "contiguous";
}

std::vector<std::int64_t> layout_positions(SequenceLayout layout, std::size_t sequence, int ranks, int rank) {
  const auto parts = static_cast<std::size_t>(layout == SequenceLayout::zigzag ? 2 * ranks : ranks);
  if (sequence % parts != 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("sequence length {} is not divisible by {} ({} layout over {} ranks); pad it to {} rows",
                            sequence, parts, to_string(layout), ranks, (sequence + parts - 1) / parts * parts),
                {.operation = "layout_positions"});
  }
  const std::size_t chunk = sequence / parts;
  std::vector<std::int64_t> positions;
  auto add_chunk = [&](std::size_t index) {
    for (std::size_t i = 0; i < chunk; ++i) positions.push_back(static_cast<std::int64_t>(index * chunk + i));
  };
  add_chunk(static_cast<std::size_t>(rank));
  if (layout == SequenceLayout::zigzag) add_chunk(parts - 1 - static_cast<std::size_t>(rank));
  return positions;
}

std::vector<std::int64_t> all_rank_positions(SequenceLayout layout, std::size_t sequence, int ranks) {
  std::vector<std::int64_t> positions;
  positions.reserve(sequence);
  for (int rank = 0; rank < ranks; ++rank) {
    const auto theirs = layout_positions(layout, sequence, ranks, rank);
    positions.insert(positions.end(), theirs.begin(), theirs.end());
  }
  return positions;
}

std::vector<float> reorder_rows(const std::vector<float>& whole, std::size_t row_elements,
                                const std::vector<std::int64_t>& positions) {
  std::vector<float> local(positions.size() * row_elements);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    std::copy_n(whole.begin() + static_cast<std::ptrdiff_t>(positions[i] * static_cast<std::int64_t>(row_elements)),
                row_elements, local.begin() + static_cast<std::ptrdiff_t>(i * row_elements));
  }
  return local;
}

void restore_rows(const std::vector<float>& local, std::size_t row_elements,
                  const std::vector<std::int64_t>& positions, std::vector<float>& whole) {
  for (std::size_t i = 0; i < positions.size(); ++i) {
    std::copy_n(local.begin() + static_cast<std::ptrdiff_t>(i * row_elements), row_elements,
                whole.begin() + static_cast<std::ptrdiff_t>(positions[i] * static_cast<std::int64_t>(row_elements)));
  }
}

}  // namespace meshcomm::layers
