#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshcomm/export.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm {

/// How mesh coordinates are assigned to ranks.
enum class PlacementKind : std::uint8_t {
  topology_aware,  ///< tp innermost within a node, then sp, fsdp, dp; ranks taken node by node
  easylm,          ///< the mesh_dim order, last axis fastest, over rank order (EasyLM/LWM on GPUs)
  torchtitan,      ///< DeviceMesh as torchtitan builds it: pp, dp_replicate, dp_shard, cp, tp (tp fastest)
  accelerate,      ///< accelerate's ParallelismConfig: dp_replicate, dp_shard, cp, sp, tp (tp fastest)
  megatron,        ///< a Megatron order string, first token fastest (e.g. "tp-cp-ep-dp-pp")
};

/// A placement policy. Parse from "topology_aware", "easylm" (or "row_major"), "torchtitan",
/// "accelerate", or "megatron:tp-cp-ep-dp-pp".
struct MESHCOMM_API Placement {
  PlacementKind kind = PlacementKind::topology_aware;
  std::vector<std::string> megatron_order;  ///< tokens, fastest first

  /// Throws Error(invalid_argument) quoting the text and listing the valid forms.
  static Placement parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
};

/// Mesh coordinates of every rank, `result[rank][axis]` in spec order: a pure function of its
/// inputs and a bijection between ranks and mesh points. Throws Error(invalid_argument) if the
/// spec's product differs from the topology's world size, or a Megatron order misses an axis.
MESHCOMM_API std::vector<std::vector<int>> place_ranks(const MeshSpec& resolved, const Placement& placement,
                                                       const Topology& topology);

/// The groups of a set of axes: ranks that share every coordinate off `axes`, each group in
/// coordinate order over `axes` (the first named slowest), groups ordered by their first rank.
/// Throws Error(invalid_argument) naming an axis that is not in `resolved`, or one named twice.
MESHCOMM_API std::vector<std::vector<int>> groups_over(const MeshSpec& resolved,
                                                       const std::vector<std::vector<int>>& placement,
                                                       const std::vector<std::string_view>& axes);

/// What a placement does to the network: rings, node spans and warnings.
struct PlacementReport {
  /// For each axis (spec order), every group as ranks, in coordinate order.
  std::vector<std::vector<std::vector<int>>> groups;
  std::string ring_axis;  ///< "sp" (or "cp"), empty if the mesh has neither
  int ring_crossings = 0;          ///< node boundaries crossed by all ring groups, wrap included
  int ring_minimum_crossings = 0;  ///< the fewest any placement could cross with those nodes
  /// For each ring group (in the order of `groups`): its crossings and its minimum.
  std::vector<std::pair<int, int>> ring_crossings_each;
  std::vector<std::string> warnings;
};

/// Analyses `placement` (from place_ranks) on `topology`.
MESHCOMM_API PlacementReport analyze_placement(const MeshSpec& resolved, const std::vector<std::vector<int>>& placement,
                                               const Topology& topology);

}  // namespace meshcomm
