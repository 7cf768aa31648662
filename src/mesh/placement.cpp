#include "placement.hpp"

namespace meshcomm::detail {

int linear_index(const std::vector<int>& sizes, const std::vector<int>& coordinates) {
  int index = 0;
  for (std::size_t axis = 0; axis < sizes.size(); ++axis) index = index * sizes[axis] + coordinates[axis];
  return index;
}

std::vector<int> coordinates_from_index(const std::vector<int>& sizes, int index) {
  std::vector<int> coordinates(sizes.size());
  for (std::size_t axis = sizes.size(); axis-- > 0;) {
    coordinates[axis] = index % sizes[axis];
    index /= sizes[axis];
  }
  return coordinates;
}

std::vector<std::vector<int>> place_ranks(const MeshSpec& resolved, PlacementPolicy policy) {
  std::vector<int> sizes;
  for (const auto& axis : resolved.axes()) sizes.push_back(axis.size);
  const int world = resolved.known_product();
  std::vector<std::vector<int>> placement(static_cast<std::size_t>(world));
  switch (policy) {
    case PlacementPolicy::row_major:
      for (int rank = 0; rank < world; ++rank) placement[rank] = coordinates_from_index(sizes, rank);
      break;
  }
  return placement;
}

}  // namespace meshcomm::detail
