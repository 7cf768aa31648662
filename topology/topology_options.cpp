#include "topology_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "meshcomm/error.hpp"

namespace meshcomm {

void add_topology_options(CLI::App& app, TopologyOptions& options) {
  app.add_option("--world", options.world, "simulate this many ranks (no MPI)");
  app.add_option("--ranks-per-node", options.ranks_per_node, "ranks per simulated node (default: all on one)");
  app.add_option("--xml", options.xml, "describe each node from this hwloc XML file (no MPI)");
  app.add_option("--policy", options.policy,
                 "placement: topology_aware, easylm, torchtitan, accelerate, megatron:ORDER")
      ->capture_default_str();
}

Topology simulated_topology(const TopologyOptions& options) {
  if (options.world < 0) {
    throw Error(ErrorCode::invalid_argument, fmt::format("--world {} must be at least 1", options.world));
  }
  if (options.ranks_per_node < 0) {
    throw Error(
        ErrorCode::invalid_argument,
        fmt::format("--ranks-per-node {} must be at least 1 (or left out: all on one node)", options.ranks_per_node));
  }
  const NodeInfo node = options.xml.empty() ? NodeInfo{} : Topology::node_from_xml(options.xml);
  int world = options.world;
  if (world == 0) world = std::max<int>(1, static_cast<int>(node.gpus.empty() ? node.cores : node.gpus.size()));
  const int per_node = options.ranks_per_node > 0 ? options.ranks_per_node : world;
  return Topology::simulated(world, per_node, node);
}

}  // namespace meshcomm
