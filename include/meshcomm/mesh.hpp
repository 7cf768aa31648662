#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/export.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/placement.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm {

class Communicator;

namespace detail {
class MeshImpl;
}

/// How a mesh is built.
struct MeshOptions {
  /// Which ranks get which coordinates (default: topology-aware, tp innermost within a node).
  Placement placement{};
  /// Where the ranks run; null: all on one node. `Topology::discover(world)` finds out.
  std::shared_ptr<const Topology> topology;
};

/// A device mesh over a communicator: each rank's coordinates, and a communicator for any axis
/// or set of axes.
///
/// The world communicator must outlive the mesh. Asking for an axis group the first time is
/// collective over the world: every rank must ask for the same groups in the same order.
///
/// ```
/// auto mesh = Mesh::create(world, MeshSpec::parse("1,-1,2,2"));
/// Communicator& tp = mesh.comm({"tp"});           // ranks that differ only in tp
/// Communicator& data = mesh.comm({"dp", "fsdp"}); // flattened, dp slowest
/// ```
class MESHCOMM_API Mesh {
 public:
  /// Resolves `spec` against `world.size()` and places every rank. Local: no communication.
  static Mesh create(const Communicator& world, const MeshSpec& spec, const MeshOptions& options = {});

  Mesh(Mesh&&) noexcept;
  Mesh& operator=(Mesh&&) noexcept;
  ~Mesh();

  /// The resolved spec (no -1 sizes).
  [[nodiscard]] const MeshSpec& spec() const noexcept;
  /// The placement policy in use.
  [[nodiscard]] const Placement& placement() const noexcept;
  /// The topology it was placed on.
  [[nodiscard]] const Topology& topology() const noexcept;
  /// Groups, ring crossings and warnings of this placement.
  [[nodiscard]] const PlacementReport& report() const noexcept;
  /// This rank's coordinates, one per axis in spec order.
  [[nodiscard]] std::span<const int> coordinates() const noexcept;
  /// Coordinates of any world rank.
  [[nodiscard]] std::span<const int> coordinates_of(int world_rank) const;
  /// This rank's coordinate on `axis`; throws `Error(invalid_argument)` for an unknown axis.
  [[nodiscard]] int coordinate(std::string_view axis) const;
  /// The world rank at `coordinates` (one per axis).
  [[nodiscard]] int rank_at(std::span<const int> coordinates) const;

  /// World ranks of this rank's group over `axes` (flattened in the given order, the first
  /// slowest). Local: no communication. Throws `Error(invalid_argument)` for an unknown or
  /// repeated axis name, listing the valid ones.
  [[nodiscard]] std::vector<int> group_ranks(std::span<const std::string_view> axes) const;
  /// Every group over `axes`, each as world ranks, ordered by its first member.
  [[nodiscard]] std::vector<std::vector<int>> all_groups(std::span<const std::string_view> axes) const;

  /// The communicator of this rank's group over `axes`; collective over the world the first time
  /// a set is asked for, then cached. Size-1 axes are valid (a group of one rank).
  [[nodiscard]] Communicator& comm(std::span<const std::string_view> axes);
  /// Convenience overload: `mesh.comm({"dp", "fsdp"})`.
  [[nodiscard]] Communicator& comm(std::initializer_list<std::string_view> axes);

  /// A human-readable account of the mesh: axes, placement, every rank's node and coordinates,
  /// the groups of every axis, the ring's node crossings, then any warnings.
  [[nodiscard]] std::string describe() const;

 private:
  explicit Mesh(std::unique_ptr<detail::MeshImpl> impl) noexcept;
  std::unique_ptr<detail::MeshImpl> impl_;
};

}  // namespace meshcomm
