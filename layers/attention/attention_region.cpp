#include "attention_region.hpp"

#include <algorithm>

namespace meshcomm::layers {

namespace {

/// [first, last + 1) of the indices whose value satisfies `keep`; empty (0, 0) if none does.
template <class Keep>
std::pair<std::size_t, std::size_t> covering_range(std::span<const std::int64_t> values, Keep keep) {
  std::size_t begin = values.size();
  std::size_t end = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!keep(values[i])) continue;
    begin = std::min(begin, i);
    end = i + 1;
  }
  return begin < end ? std::pair{begin, end} : std::pair{std::size_t{0}, std::size_t{0}};
}

}  // namespace

AttentionRegion visible_region(std::span<const std::int64_t> query_positions,
                               std::span<const std::int64_t> key_positions, bool causal) {
  if (query_positions.empty() || key_positions.empty()) return {};
  if (!causal) return {0, query_positions.size(), 0, key_positions.size()};
  const std::int64_t first_key = *std::min_element(key_positions.begin(), key_positions.end());
  const std::int64_t last_query = *std::max_element(query_positions.begin(), query_positions.end());
  const auto [query_begin, query_end] =
      covering_range(query_positions, [&](std::int64_t query) { return query >= first_key; });
  const auto [key_begin, key_end] = covering_range(key_positions, [&](std::int64_t key) { return key <= last_query; });
  if (query_begin == query_end || key_begin == key_end) return {};
  return {query_begin, query_end, key_begin, key_end};
}

}  // namespace meshcomm::layers
