#pragma once

#include <algorithm>
#include <vector>

namespace meshcomm::advisor {

/// The median of `values`, the mean of the two middle ones for an even count (two calibration
/// launches count equally); 0 for none. perf::median keeps the upper middle one, which for two
/// launches would be the slower.
inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

}  // namespace meshcomm::advisor
