#include "cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "meshcomm/error.hpp"

namespace meshcomm::layers {

template <class T>
T cross_entropy(const T* logits, const std::int32_t* targets, T* d_logits, std::size_t rows, std::size_t vocab,
                T scale) {
  T total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = logits + r * vocab;
    const std::int32_t target = targets[r];
    if (target < 0 || static_cast<std::size_t>(target) >= vocab) {
      throw Error(ErrorCode::invalid_argument, "cross_entropy: target " + std::to_string(target) + " of row " +
                                                   std::to_string(r) + " is outside [0, " + std::to_string(vocab) +
                                                   ")");
    }
    const T top = *std::max_element(row, row + vocab);
    T sum = 0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - top);
    const T log_sum = top + std::log(sum);
    total += log_sum - row[target];
    T* d_row = d_logits + r * vocab;
    for (std::size_t v = 0; v < vocab; ++v) d_row[v] = std::exp(row[v] - log_sum) * scale;
    d_row[target] -= scale;
  }
  return total * scale;
}

template float cross_entropy<float>(const float*, const std::int32_t*, float*, std::size_t, std::size_t, float);
template double cross_entropy<double>(const double*, const std::int32_t*, double*, std::size_t, std::size_t, double);

}  // namespace meshcomm::layers
