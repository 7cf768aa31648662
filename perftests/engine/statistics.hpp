#pragma once

// The summaries every perftest reports: medians, and speedups measured in turns.

#include <algorithm>
#include <vector>

namespace meshcomm::perf {

/// The median of `values` (the upper middle one of an even count); 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// How many times faster a variant is than its baseline when the two were timed in turns:
/// the median over repeats of baseline[r] / variant[r]. Each ratio pairs calls measured moments
/// apart, so drift between repeats (this kind of machine's memory bandwidth can halve for seconds)
/// cancels out instead of landing on one side. Repeats where either time is missing (0) are left
/// out; 0 when none is left.
inline double paired_speedup(const std::vector<double>& baseline, const std::vector<double>& variant) {
  std::vector<double> ratios;
  for (std::size_t repeat = 0; repeat < std::min(baseline.size(), variant.size()); ++repeat) {
    if (baseline[repeat] > 0 && variant[repeat] > 0) ratios.push_back(baseline[repeat] / variant[repeat]);
  }
  return median(std::move(ratios));
}

/// Of several baselines timed in the same turns, the index of the one with the lowest median: the
/// call a user would choose for this size, whose times the variants are then paired with. Taking
/// the faster baseline in each turn instead would measure against the minimum of two noisy
/// samples, which is faster than either call and than anything a program can choose in advance.
/// `candidates` must not be empty.
inline std::size_t lowest_median(const std::vector<std::vector<double>>& candidates) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < candidates.size(); ++c) {
    if (median(candidates[c]) < median(candidates[best])) best = c;
  }
  return best;
}

}  // namespace meshcomm::perf
