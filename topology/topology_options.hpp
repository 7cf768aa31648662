#pragma once

#include <string>

#include "meshcomm/topology.hpp"

namespace CLI {
class App;
}

namespace meshcomm {

/// The options meshcomm's tools share to describe where ranks run: a simulated world, or one
/// node's hwloc XML, and the placement policy.
struct TopologyOptions {
  int world = 0;
  int ranks_per_node = 0;
  std::string xml;
  std::string policy = "topology_aware";

  /// True when the options describe a world without MPI (--world or --xml given).
  [[nodiscard]] bool simulated() const { return world > 0 || !xml.empty(); }
};

/// Adds --world, --ranks-per-node, --xml and --policy to `app`, filling `options`.
void add_topology_options(CLI::App& app, TopologyOptions& options);

/// The world the options describe: `world` ranks (default: one per GPU of the XML node, else per
/// core) on nodes of `ranks_per_node` (default: all on one), each node like the XML's. Throws
/// Error(invalid_argument) naming the option when a size is below 1 or the XML cannot be read.
Topology simulated_topology(const TopologyOptions& options);

}  // namespace meshcomm
