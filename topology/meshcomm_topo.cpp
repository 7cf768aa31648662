// meshcomm-topo: shows where a mesh's ranks land, on the real machine under mpirun or on a
// simulated world.
//
//   meshcomm-topo --world 64 --ranks-per-node 8 --mesh-dim 1,2,4,8
//   meshcomm-topo --world 256 --ranks-per-node 8 --mesh-dim 1,1,4,64 --policy easylm
//   meshcomm-topo --xml topology/fixtures/dgx_h100.xml --mesh-dim 1,-1,4,1
//   mpirun -np 4 meshcomm-topo --mesh-dim 1,-1,2,1 --json topo.json

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>

#include "meshcomm/config.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/placement.hpp"
#include "meshcomm/topology.hpp"
#include "topology_options.hpp"
#if MESHCOMM_HAVE_MPI
#include "meshcomm/communicator.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#endif

namespace meshcomm {
namespace {

struct TopoOptions {
  TopologyOptions where;
  std::string mesh_dim = "1,-1,1,1";
  std::vector<std::string> axes;
  std::string json_path;
  bool all_ranks = false;
};

void print_devices(const char* kind, const std::vector<DeviceInfo>& devices) {
  for (const auto& device : devices) {
    fmt::print("    {} {:<8} pci {:<14} numa {}{}\n", kind, device.name.empty() ? "?" : device.name,
               device.pci_bus_id.empty() ? "-" : device.pci_bus_id, device.numa_node,
               device.nvlink_peers.empty() ? "" : fmt::format("  nvlink peers [{}]", fmt::join(device.nvlink_peers, ",")));
  }
}

void print_nodes(const Topology& topology) {
  const auto& first = topology.node(0);
  fmt::print("nodes: {} ({} ranks, at most {} per node)\n", topology.node_count(), topology.world_size(),
             topology.max_ranks_per_node());
  const int shown = std::min(topology.node_count(), 4);
  for (int n = 0; n < shown; ++n) {
    const auto& node = topology.node(n);
    fmt::print("  node {} {}: {} packages, {} NUMA nodes, {} cores, {} GPUs, {} NICs, ranks [{}]\n", n, node.host,
               node.packages, node.numa_nodes, node.cores, node.gpus.size(), node.nics.size(),
               fmt::join(topology.ranks_on(n), ","));
  }
  if (topology.node_count() > shown) fmt::print("  ... {} more nodes like node 0\n", topology.node_count() - shown);
  print_devices("gpu", first.gpus);
  print_devices("nic", first.nics);
}

std::string summary(const std::vector<std::vector<int>>& groups) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < groups.size() && i < 8; ++i) parts.push_back(fmt::format("[{}]", fmt::join(groups[i], ",")));
  std::string text = fmt::format("{}", fmt::join(parts, " "));
  if (groups.size() > 8) text += fmt::format(" ... ({} groups)", groups.size());
  return text;
}

int report(const Topology& topology, const TopoOptions& options) {
  const auto spec = MeshSpec::parse(options.mesh_dim).resolved(topology.world_size());
  const auto placement_policy = Placement::parse(options.where.policy);
  const auto placement = place_ranks(spec, placement_policy, topology);
  const auto analysis = analyze_placement(spec, placement, topology);
  print_nodes(topology);
  fmt::print("\nmesh {} placed by {}\n", spec.to_string(), placement_policy.to_string());
  fmt::print("{:>6} {:>5} {:>6}", "rank", "node", "local");
  for (const auto& axis : spec.axes()) fmt::print(" {:>6}", axis.name);
  fmt::print("  bound to (package/numa/cpus)\n");
  const int shown = options.all_ranks ? topology.world_size() : std::min(topology.world_size(), 32);
  for (int rank = 0; rank < shown; ++rank) {
    fmt::print("{:>6} {:>5} {:>6}", rank, topology.node_of(rank), topology.local_rank(rank));
    for (int coordinate : placement[rank]) fmt::print(" {:>6}", coordinate);
    const auto& bound = topology.binding(rank);
    fmt::print("  {}\n", bound.cpus.empty() ? std::string("-") : fmt::format("{}/{}/{}", bound.package, bound.numa_node, bound.cpus));
  }
  if (shown < topology.world_size()) fmt::print("  ... {} more ranks (--all-ranks shows them)\n", topology.world_size() - shown);
  fmt::print("\ngroups:\n");
  nlohmann::json groups_json = nlohmann::json::object();
  for (std::size_t axis = 0; axis < spec.axes().size(); ++axis) {
    fmt::print("  {:<12} {}\n", spec.axes()[axis].name, summary(analysis.groups[axis]));
    groups_json[spec.axes()[axis].name] = analysis.groups[axis];
  }
  for (const auto& set : options.axes) {
    const auto groups = groups_over(spec, placement, split_axis_list(set));
    fmt::print("  {:<12} {}\n", set, summary(groups));
    groups_json[set] = groups;
  }
  nlohmann::json crossings = nlohmann::json::object();
  if (!analysis.ring_axis.empty()) {
    fmt::print("\n{} ring node crossings: {} (minimum {})\n", analysis.ring_axis, analysis.ring_crossings,
               analysis.ring_minimum_crossings);
    std::vector<std::string> each;
    for (std::size_t ring = 0; ring < analysis.ring_crossings_each.size() && ring < 16; ++ring) {
      each.push_back(fmt::format("{}/{}", analysis.ring_crossings_each[ring].first,
                                 analysis.ring_crossings_each[ring].second));
    }
    fmt::print("  each ring, crossings/minimum: {}{}\n", fmt::join(each, " "),
               analysis.ring_crossings_each.size() > 16
                   ? fmt::format(" ... ({} rings)", analysis.ring_crossings_each.size())
                   : "");
    nlohmann::json per_ring = nlohmann::json::array();
    for (const auto& [actual, minimum] : analysis.ring_crossings_each) {
      per_ring.push_back({{"actual", actual}, {"minimum", minimum}});
    }
    crossings[analysis.ring_axis] = {{"actual", analysis.ring_crossings},
                                     {"minimum", analysis.ring_minimum_crossings},
                                     {"each", per_ring}};
  }
  fmt::print("\n");
  for (const auto& warning : analysis.warnings) fmt::print("warning: {}\n", warning);
  if (analysis.warnings.empty()) fmt::print("warnings: none\n");
  if (!options.json_path.empty()) {
    nlohmann::json ranks = nlohmann::json::array();
    for (int rank = 0; rank < topology.world_size(); ++rank) {
      nlohmann::json coords = nlohmann::json::object();
      for (std::size_t axis = 0; axis < spec.axes().size(); ++axis) coords[spec.axes()[axis].name] = placement[rank][axis];
      ranks.push_back({{"rank", rank}, {"node", topology.node_of(rank)}, {"coords", coords}});
    }
    std::ofstream(options.json_path) << nlohmann::json{{"mesh", spec.to_string()},
                                                       {"policy", placement_policy.to_string()},
                                                       {"ranks", ranks},
                                                       {"groups", groups_json},
                                                       {"ring_crossings", crossings},
                                                       {"warnings", analysis.warnings}}
                                            .dump(2)
                                     << "\n";
    fmt::print("JSON: {}\n", options.json_path);
  }
  return 0;
}

int run(int argc, char** argv) {
  TopoOptions options;
  CLI::App app{"meshcomm-topo: nodes, sockets, GPUs and NICs, and where a mesh's ranks land"};
  add_topology_options(app, options.where);
  app.add_option("--mesh-dim", options.mesh_dim, "mesh dims, e.g. 1,2,4,8 or dp:2,tp:-1")->capture_default_str();
  app.add_option("--axes", options.axes, "also show the groups of this comma-separated axis set; repeatable");
  app.add_option("--json", options.json_path, "write ranks, groups, ring crossings and warnings here");
  app.add_flag("--all-ranks", options.all_ranks, "list every rank (default: the first 32)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (options.where.simulated()) return report(simulated_topology(options.where), options);
#if MESHCOMM_HAVE_MPI
    MpiSession session(argc, argv);
    MpiBootstrap bootstrap;
    auto world = Communicator::create(bootstrap);
    const auto topology = Topology::discover(world);
    const int result = world.rank() == 0 ? report(topology, options) : 0;
    world.barrier();
    return result;
#else
    fmt::print(stderr, "meshcomm-topo: this build has no MPI; pass --world N (and --ranks-per-node R) or --xml FILE\n");
    return 2;
#endif
  } catch (const Error& error) {
    fmt::print(stderr, "meshcomm-topo: {}\n", error.what());
    return 2;
  }
}

}  // namespace
}  // namespace meshcomm

int main(int argc, char** argv) { return meshcomm::run(argc, argv); }
