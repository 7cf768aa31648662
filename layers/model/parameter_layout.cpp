#include "model/parameter_layout.hpp"

#include <algorithm>
#include <cmath>

namespace meshcomm::layers {

namespace {

/// SplitMix64: a portable generator, so the initial model is the same on every platform.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double symmetric() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
};

}  // namespace

void ParameterLayout::add(std::string name, std::size_t global_rows, std::size_t global_columns, TensorSplit split,
                          float init_std, bool decays) {
  const auto tp = static_cast<std::size_t>(tp_);
  TensorSlot slot{.name = std::move(name),
                  .global_rows = global_rows,
                  .global_columns = global_columns,
                  .split = split,
                  .rows = split == TensorSplit::rows ? global_rows / tp : global_rows,
                  .columns = split == TensorSplit::columns ? global_columns / tp : global_columns,
                  .offset = elements_,
                  .init_std = init_std,
                  .decays = decays};
  elements_ += slot.elements();
  slots_.push_back(std::move(slot));
}

std::vector<float> ParameterLayout::initial_values(std::uint64_t seed, std::size_t unit) const {
  std::vector<float> values(elements_);
  const auto rank = static_cast<std::size_t>(tp_rank_);
  for (std::size_t index = 0; index < slots_.size(); ++index) {
    const TensorSlot& slot = slots_[index];
    SplitMix64 random{seed ^ (0x51ED270B27E1ULL * (unit + 1)) ^ (0xA24BAED4963EE407ULL * (index + 1))};
    const double half_width = std::sqrt(3.0) * slot.init_std;  // uniform with this standard deviation
    const std::size_t first_row = slot.split == TensorSplit::rows ? rank * slot.rows : 0;
    const std::size_t first_column = slot.split == TensorSplit::columns ? rank * slot.columns : 0;
    for (std::size_t row = 0; row < slot.global_rows; ++row) {
      for (std::size_t column = 0; column < slot.global_columns; ++column) {
        const double value = slot.init_std == 0 ? 1.0 : half_width * random.symmetric();
        if (row < first_row || row >= first_row + slot.rows) continue;
        if (column < first_column || column >= first_column + slot.columns) continue;
        values[slot.offset + (row - first_row) * slot.columns + (column - first_column)] = static_cast<float>(value);
      }
    }
  }
  return values;
}

std::vector<float> ParameterLayout::decay_mask() const {
  std::vector<float> mask(elements_, 0.0F);
  for (const TensorSlot& slot : slots_) {
    if (!slot.decays) continue;
    std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(slot.offset), slot.elements(), 1.0F);
  }
  return mask;
}

}  // namespace meshcomm::layers
