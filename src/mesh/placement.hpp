#pragma once

#include <vector>

#include "meshcomm/mesh.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm::detail {

/// Row-major linear index of `coordinates` within `sizes` (last axis fastest).
int linear_index(const std::vector<int>& sizes, const std::vector<int>& coordinates);
/// The inverse of `linear_index`.
std::vector<int> coordinates_from_index(const std::vector<int>& sizes, int index);

/// Mesh coordinates of every rank, `result[rank][axis]`, for a resolved spec. A pure function of
/// its inputs, and a bijection between ranks and mesh points.
std::vector<std::vector<int>> place_ranks(const MeshSpec& resolved, PlacementPolicy policy);

}  // namespace meshcomm::detail
