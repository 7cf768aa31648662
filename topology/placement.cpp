#include "meshcomm/placement.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/error.hpp"

namespace meshcomm {

namespace {

Error placement_error(const std::string& message) {
  return Error(ErrorCode::invalid_argument, message, {.operation = "placement"});
}

/// Position of the first axis whose name is one of `names`, if any.
std::optional<std::size_t> find_any(const MeshSpec& spec, std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    if (auto position = spec.find(name)) return position;
  }
  return std::nullopt;
}

/// Axis positions from slowest to fastest: `others` first (in spec order), then `inner_to_outer`
/// reversed. Each entry of `inner_to_outer` lists the names one role goes by.
std::vector<std::size_t> order_by_roles(const MeshSpec& spec,
                                        const std::vector<std::vector<std::string_view>>& outer_to_inner) {
  std::vector<std::size_t> ordered;
  std::vector<bool> used(spec.axes().size(), false);
  std::vector<std::size_t> roles;
  for (const auto& names : outer_to_inner) {
    for (auto name : names) {
      if (auto position = spec.find(name); position && !used[*position]) {
        roles.push_back(*position);
        used[*position] = true;
      }
    }
  }
  for (std::size_t axis = 0; axis < spec.axes().size(); ++axis) {
    if (!used[axis]) ordered.push_back(axis);
  }
  ordered.insert(ordered.end(), roles.begin(), roles.end());
  return ordered;
}

/// Megatron's order string, first token fastest: the axis positions slowest to fastest.
std::vector<std::size_t> megatron_axis_order(const MeshSpec& spec, const std::vector<std::string>& tokens) {
  std::vector<std::size_t> fastest_first;
  std::vector<bool> used(spec.axes().size(), false);
  auto take = [&](std::string_view name) {
    if (auto position = spec.find(name); position && !used[*position]) {
      fastest_first.push_back(*position);
      used[*position] = true;
    }
  };
  for (const auto& token : tokens) {
    if (token == "dp") {
      // Megatron's data-parallel axis spans both dp axes; sharding (fsdp) is the faster one.
      for (auto name : {"fsdp", "dp_shard", "dp", "dp_replicate"}) take(name);
    } else if (token == "cp") {
      take("cp");
      take("sp");
    } else {
      take(token);
    }
  }
  std::vector<std::string> missing;
  for (std::size_t axis = 0; axis < spec.axes().size(); ++axis) {
    if (!used[axis] && spec.axes()[axis].size > 1) missing.push_back(spec.axes()[axis].name);
    if (!used[axis]) fastest_first.push_back(axis);  // size-1 axes do not matter
  }
  if (!missing.empty()) {
    throw placement_error(fmt::format("the megatron order '{}' does not place axes {}; add them to the order",
                                      fmt::join(tokens, "-"), fmt::join(missing, ", ")));
  }
  return {fastest_first.rbegin(), fastest_first.rend()};
}

}  // namespace

Placement Placement::parse(std::string_view text) {
  Placement placement;
  if (text == "topology_aware" || text == "default") return placement;
  if (text == "easylm" || text == "row_major") {
    placement.kind = PlacementKind::easylm;
    return placement;
  }
  if (text == "torchtitan" || text == "devicemesh") {
    placement.kind = PlacementKind::torchtitan;
    return placement;
  }
  if (text == "accelerate") {
    placement.kind = PlacementKind::accelerate;
    return placement;
  }
  if (text.starts_with("megatron:") && text.size() > 9) {
    placement.kind = PlacementKind::megatron;
    std::string_view rest = text.substr(9);
    while (!rest.empty()) {
      const auto dash = rest.find('-');
      placement.megatron_order.emplace_back(rest.substr(0, dash));
      rest = dash == std::string_view::npos ? std::string_view{} : rest.substr(dash + 1);
    }
    return placement;
  }
  throw placement_error(fmt::format("placement policy '{}' is unknown; valid: topology_aware, easylm (row_major), "
                                    "torchtitan, accelerate, megatron:ORDER such as megatron:tp-cp-ep-dp-pp",
                                    text));
}

std::string Placement::to_string() const {
  switch (kind) {
    case PlacementKind::topology_aware: return "topology_aware";
    case PlacementKind::easylm: return "easylm";
    case PlacementKind::torchtitan: return "torchtitan";
    case PlacementKind::accelerate: return "accelerate";
    case PlacementKind::megatron: return fmt::format("megatron:{}", fmt::join(megatron_order, "-"));
  }
  return "unknown";
}

std::vector<std::vector<int>> place_ranks(const MeshSpec& resolved, const Placement& placement,
                                          const Topology& topology) {
  const int world = topology.world_size();
  if (resolved.known_product() != world || !resolved.is_resolved()) {
    throw placement_error(fmt::format("mesh {} has {} points but the topology has {} ranks", resolved.to_string(),
                                      resolved.known_product(), world));
  }
  // 1. The order of axes, slowest to fastest.
  std::vector<std::size_t> axis_order;
  switch (placement.kind) {
    case PlacementKind::easylm:
      axis_order.resize(resolved.axes().size());
      std::iota(axis_order.begin(), axis_order.end(), std::size_t{0});
      break;
    case PlacementKind::torchtitan:
      axis_order = order_by_roles(resolved, {{"pp"}, {"dp_replicate", "dp"}, {"dp_shard", "fsdp"}, {"cp", "sp"}, {"tp"}});
      break;
    case PlacementKind::accelerate:
      axis_order = order_by_roles(resolved, {{"dp_replicate", "dp"}, {"dp_shard", "fsdp"}, {"cp"}, {"sp"}, {"tp"}});
      break;
    case PlacementKind::topology_aware:
      axis_order = order_by_roles(resolved, {{"pp"}, {"dp_replicate", "dp"}, {"dp_shard", "fsdp"}, {"cp", "sp"}, {"tp"}});
      break;
    case PlacementKind::megatron: axis_order = megatron_axis_order(resolved, placement.megatron_order); break;
  }
  // 2. The order ranks take mesh points in: rank order, or node by node for topology_aware, so
  //    that the fastest axes stay on one node whatever order the launcher numbered ranks in.
  std::vector<int> rank_order(static_cast<std::size_t>(world));
  std::iota(rank_order.begin(), rank_order.end(), 0);
  if (placement.kind == PlacementKind::topology_aware) {
    std::stable_sort(rank_order.begin(), rank_order.end(),
                     [&](int a, int b) { return topology.node_of(a) < topology.node_of(b); });
  }
  // 3. Point m of the mesh (row-major over axis_order) goes to rank_order[m].
  std::vector<std::vector<int>> coordinates(static_cast<std::size_t>(world),
                                            std::vector<int>(resolved.axes().size()));
  for (int point = 0; point < world; ++point) {
    int rest = point;
    auto& mine = coordinates[rank_order[point]];
    for (auto axis = axis_order.rbegin(); axis != axis_order.rend(); ++axis) {
      const int size = resolved.axes()[*axis].size;
      mine[*axis] = rest % size;
      rest /= size;
    }
  }
  return coordinates;
}

std::vector<std::vector<int>> groups_over(const MeshSpec& resolved, const std::vector<std::vector<int>>& placement,
                                          const std::vector<std::string_view>& axes) {
  const auto spec_axes = resolved.axes();
  std::vector<std::size_t> inside;
  for (auto name : axes) {
    const auto position = resolved.find(name);
    if (!position) {
      throw Error(ErrorCode::invalid_argument, fmt::format("axes: '{}' is not an axis of {}", name, resolved.to_string()));
    }
    if (std::find(inside.begin(), inside.end(), *position) != inside.end()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("axes: '{}' is named twice", name));
    }
    inside.push_back(*position);
  }
  int group_size = 1;
  for (auto position : inside) group_size *= spec_axes[position].size;
  const int world = static_cast<int>(placement.size());
  // Ranks are filed by their coordinates off the axes (which group) and on them (which place).
  std::map<long long, std::vector<int>> by_rest;
  for (int rank = 0; rank < world; ++rank) {
    const auto& point = placement[static_cast<std::size_t>(rank)];
    long long rest = 0;
    for (std::size_t axis = 0; axis < spec_axes.size(); ++axis) {
      if (std::find(inside.begin(), inside.end(), axis) == inside.end()) rest = rest * spec_axes[axis].size + point[axis];
    }
    int within = 0;
    for (auto position : inside) within = within * spec_axes[position].size + point[position];
    auto& group = by_rest[rest];
    if (group.empty()) group.assign(static_cast<std::size_t>(group_size), -1);
    group[static_cast<std::size_t>(within)] = rank;
  }
  std::vector<std::vector<int>> groups;
  groups.reserve(by_rest.size());
  for (auto& entry : by_rest) groups.push_back(std::move(entry.second));
  std::sort(groups.begin(), groups.end());
  return groups;
}

PlacementReport analyze_placement(const MeshSpec& resolved, const std::vector<std::vector<int>>& placement,
                                  const Topology& topology) {
  PlacementReport report;
  const auto axes = resolved.axes();
  std::map<std::vector<int>, int> rank_at;
  for (std::size_t rank = 0; rank < placement.size(); ++rank) rank_at[placement[rank]] = static_cast<int>(rank);
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    std::vector<std::vector<int>> groups;
    std::set<int> seen;
    for (std::size_t rank = 0; rank < placement.size(); ++rank) {
      if (seen.count(static_cast<int>(rank)) != 0U) continue;
      std::vector<int> group;
      auto point = placement[rank];
      for (int c = 0; c < axes[axis].size; ++c) {
        point[axis] = c;
        group.push_back(rank_at.at(point));
        seen.insert(group.back());
      }
      groups.push_back(std::move(group));
    }
    report.groups.push_back(std::move(groups));
  }
  const int per_node = topology.max_ranks_per_node();
  if (auto tp = resolved.find("tp"); tp && axes[*tp].size > 1 && per_node % axes[*tp].size == 0) {
    for (const auto& group : report.groups[*tp]) {
      std::set<int> nodes;
      for (int rank : group) nodes.insert(topology.node_of(rank));
      if (nodes.size() > 1) {
        report.warnings.push_back(fmt::format(
            "tp group [{}] spans {} nodes although tp = {} fits in a node of {} ranks; tp traffic leaves NVLink",
            fmt::join(group, ","), nodes.size(), axes[*tp].size, per_node));
        break;
      }
    }
  }
  if (auto ring = find_any(resolved, {"sp", "cp"}); ring && axes[*ring].size > 1) {
    report.ring_axis = axes[*ring].name;
    for (const auto& group : report.groups[*ring]) {
      std::set<int> nodes;
      int crossings = 0;
      for (std::size_t i = 0; i < group.size(); ++i) {
        nodes.insert(topology.node_of(group[i]));
        if (topology.node_of(group[i]) != topology.node_of(group[(i + 1) % group.size()])) ++crossings;
      }
      const int minimum = nodes.size() > 1 ? static_cast<int>(nodes.size()) : 0;
      report.ring_crossings += crossings;
      report.ring_minimum_crossings += minimum;
      report.ring_crossings_each.emplace_back(crossings, minimum);
    }
    if (report.ring_crossings > report.ring_minimum_crossings) {
      report.warnings.push_back(fmt::format("{} rings cross node boundaries {} times where {} would do",
                                            report.ring_axis, report.ring_crossings, report.ring_minimum_crossings));
    }
  }
  return report;
}

}  // namespace meshcomm
