#include "meshcomm/mesh.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm {

namespace detail {

namespace {

/// Row-major linear index of `coordinates` within `sizes` (last axis fastest).
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

}  // namespace

/// The state behind a `Mesh`: the placement of every rank and the cache of group communicators.
class MeshImpl {
 public:
  MeshImpl(const Communicator& world, MeshSpec spec, Placement policy, std::shared_ptr<const Topology> topology)
      : world_(&world),
        spec_(std::move(spec)),
        policy_(std::move(policy)),
        topology_(topology != nullptr ? std::move(topology)
                                      : std::make_shared<const Topology>(Topology::simulated(world.size(), world.size()))),
        placement_(place_ranks(spec_, policy_, *topology_)),
        report_(analyze_placement(spec_, placement_, *topology_)) {
    for (const auto& axis : spec_.axes()) sizes_.push_back(axis.size);
    rank_at_index_.resize(placement_.size());
    for (std::size_t rank = 0; rank < placement_.size(); ++rank) {
      rank_at_index_[linear_index(sizes_, placement_[rank])] = static_cast<int>(rank);
    }
  }

  /// Axis positions of `axes`, validated: known, not repeated.
  [[nodiscard]] std::vector<std::size_t> axis_positions(std::span<const std::string_view> axes) const {
    std::vector<std::size_t> positions;
    for (auto name : axes) {
      auto position = spec_.find(name);
      if (!position) {
        std::vector<std::string> valid;
        for (const auto& axis : spec_.axes()) valid.push_back(axis.name);
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("axis '{}' is not in the mesh; valid axes are {}", name, fmt::join(valid, ", ")),
                    {.operation = "Mesh"});
      }
      if (std::find(positions.begin(), positions.end(), *position) != positions.end()) {
        throw Error(ErrorCode::invalid_argument, fmt::format("axis '{}' is given twice in [{}]", name, fmt::join(axes, ",")),
                    {.operation = "Mesh"});
      }
      positions.push_back(*position);
    }
    return positions;
  }

  /// Ranks sharing `rank`'s coordinates off `positions`, row-major over `positions` in order.
  [[nodiscard]] std::vector<int> group_of(int rank, const std::vector<std::size_t>& positions) const {
    std::vector<int> group_sizes;
    for (auto position : positions) group_sizes.push_back(sizes_[position]);
    int group_size = 1;
    for (int size : group_sizes) group_size *= size;
    std::vector<int> members;
    auto coordinates = placement_[rank];
    for (int index = 0; index < group_size; ++index) {
      const auto within = coordinates_from_index(group_sizes, index);
      for (std::size_t i = 0; i < positions.size(); ++i) coordinates[positions[i]] = within[i];
      members.push_back(rank_at_index_[linear_index(sizes_, coordinates)]);
    }
    return members;
  }

  [[nodiscard]] int rank_at(std::span<const int> coordinates) const {
    if (coordinates.size() != sizes_.size()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{} coordinates given for a mesh of {} axes", coordinates.size(), sizes_.size()),
                  {.operation = "Mesh::rank_at"});
    }
    for (std::size_t axis = 0; axis < sizes_.size(); ++axis) {
      if (coordinates[axis] < 0 || coordinates[axis] >= sizes_[axis]) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("coordinate {} on axis '{}' is outside 0..{}", coordinates[axis],
                                spec_.axes()[axis].name, sizes_[axis] - 1),
                    {.operation = "Mesh::rank_at"});
      }
    }
    return rank_at_index_[linear_index(sizes_, {coordinates.begin(), coordinates.end()})];
  }

  const Communicator* world_;
  MeshSpec spec_;
  Placement policy_;
  std::shared_ptr<const Topology> topology_;
  std::vector<std::vector<int>> placement_;
  PlacementReport report_;
  std::vector<int> sizes_;
  std::vector<int> rank_at_index_;
  std::map<std::vector<std::size_t>, std::unique_ptr<Communicator>> comms_;
};

}  // namespace detail

Mesh Mesh::create(const Communicator& world, const MeshSpec& spec, const MeshOptions& options) {
  auto resolved = spec.resolved(world.size());
  if (options.topology != nullptr && options.topology->world_size() != world.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the topology has {} ranks but the communicator {}", options.topology->world_size(),
                            world.size()),
                {.operation = "Mesh::create"});
  }
  return Mesh(std::make_unique<detail::MeshImpl>(world, std::move(resolved), options.placement, options.topology));
}

Mesh::Mesh(std::unique_ptr<detail::MeshImpl> impl) noexcept : impl_(std::move(impl)) {}
Mesh::Mesh(Mesh&&) noexcept = default;
Mesh& Mesh::operator=(Mesh&&) noexcept = default;
Mesh::~Mesh() = default;

const MeshSpec& Mesh::spec() const noexcept { return impl_->spec_; }
const Placement& Mesh::placement() const noexcept { return impl_->policy_; }
const Topology& Mesh::topology() const noexcept { return *impl_->topology_; }
const PlacementReport& Mesh::report() const noexcept { return impl_->report_; }
std::span<const int> Mesh::coordinates() const noexcept { return impl_->placement_[impl_->world_->rank()]; }

std::span<const int> Mesh::coordinates_of(int world_rank) const {
  if (world_rank < 0 || world_rank >= static_cast<int>(impl_->placement_.size())) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("rank {} is outside the mesh's 0..{}", world_rank, impl_->placement_.size() - 1),
                {.operation = "Mesh::coordinates_of"});
  }
  return impl_->placement_[world_rank];
}

int Mesh::coordinate(std::string_view axis) const {
  const std::string_view axes[] = {axis};
  return coordinates()[impl_->axis_positions(axes).front()];
}

int Mesh::rank_at(std::span<const int> coordinates) const { return impl_->rank_at(coordinates); }

std::vector<int> Mesh::group_ranks(std::span<const std::string_view> axes) const {
  return impl_->group_of(impl_->world_->rank(), impl_->axis_positions(axes));
}

std::vector<std::vector<int>> Mesh::all_groups(std::span<const std::string_view> axes) const {
  const auto positions = impl_->axis_positions(axes);
  std::vector<std::vector<int>> groups;
  std::vector<bool> seen(impl_->placement_.size(), false);
  for (int rank = 0; rank < static_cast<int>(seen.size()); ++rank) {
    if (seen[rank]) continue;
    auto group = impl_->group_of(rank, positions);
    for (int member : group) seen[member] = true;
    groups.push_back(std::move(group));
  }
  return groups;
}

Communicator& Mesh::comm(std::span<const std::string_view> axes) {
  const auto positions = impl_->axis_positions(axes);
  auto& cached = impl_->comms_[positions];
  if (cached != nullptr) return *cached;
  // Color: this rank's coordinates off the group's axes; key: its place within the group.
  const auto& mine = impl_->placement_[impl_->world_->rank()];
  std::vector<int> other_sizes;
  std::vector<int> other_coordinates;
  std::vector<int> group_sizes;
  std::vector<int> group_coordinates;
  for (std::size_t axis = 0; axis < mine.size(); ++axis) {
    if (std::find(positions.begin(), positions.end(), axis) != positions.end()) continue;
    other_sizes.push_back(impl_->sizes_[axis]);
    other_coordinates.push_back(mine[axis]);
  }
  for (auto position : positions) {
    group_sizes.push_back(impl_->sizes_[position]);
    group_coordinates.push_back(mine[position]);
  }
  cached = std::make_unique<Communicator>(impl_->world_->split(detail::linear_index(other_sizes, other_coordinates),
                                                               detail::linear_index(group_sizes, group_coordinates)));
  return *cached;
}

Communicator& Mesh::comm(std::initializer_list<std::string_view> axes) {
  return comm(std::span<const std::string_view>(axes.begin(), axes.size()));
}

std::string Mesh::describe() const {
  const auto& spec = impl_->spec_;
  const auto& topology = *impl_->topology_;
  const auto& report = impl_->report_;
  std::string text = fmt::format("mesh {} over {} ranks on {} node(s), placement {}\n", spec.to_string(),
                                 impl_->placement_.size(), topology.node_count(), impl_->policy_.to_string());
  text += fmt::format("{:>6} {:>5}", "rank", "node");
  for (const auto& axis : spec.axes()) text += fmt::format(" {:>6}", axis.name);
  text += "\n";
  for (std::size_t rank = 0; rank < impl_->placement_.size(); ++rank) {
    text += fmt::format("{:>6} {:>5}", rank, topology.node_of(static_cast<int>(rank)));
    for (int coordinate : impl_->placement_[rank]) text += fmt::format(" {:>6}", coordinate);
    text += "\n";
  }
  text += "groups:\n";
  for (std::size_t axis = 0; axis < spec.axes().size(); ++axis) {
    std::vector<std::string> groups;
    for (const auto& group : report.groups[axis]) groups.push_back(fmt::format("[{}]", fmt::join(group, ",")));
    text += fmt::format("  {:<6} {}\n", spec.axes()[axis].name, fmt::join(groups, " "));
  }
  if (!report.ring_axis.empty()) {
    text += fmt::format("{} ring node crossings: {} (minimum {})\n", report.ring_axis, report.ring_crossings,
                        report.ring_minimum_crossings);
  }
  if (report.warnings.empty()) {
    text += "warnings: none\n";
  } else {
    for (const auto& warning : report.warnings) text += "warning: " + warning + "\n";
  }
  return text;
}

}  // namespace meshcomm
