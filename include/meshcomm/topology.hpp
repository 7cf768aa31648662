#pragma once

#include <memory>
#include <string>
#include <vector>

#include "meshcomm/export.hpp"

namespace meshcomm {

class Communicator;

/// A PCI device of a node: a GPU or a network interface.
struct DeviceInfo {
  std::string name;        ///< OS name: "cuda0", "nvml0", "mlx5_0", "eth0"
  std::string pci_bus_id;  ///< "0000:1b:00.0", empty if unknown
  int numa_node = -1;      ///< closest NUMA node, -1 if unknown
  std::vector<int> nvlink_peers;  ///< GPUs (indices into NodeInfo::gpus) reached over NVLink
};

/// Where one rank's process is bound.
struct RankBinding {
  int package = -1;    ///< the package holding all its cores, -1 if it spans several or is unknown
  int numa_node = -1;  ///< likewise for NUMA nodes
  std::string cpus;    ///< its CPU set as a list, e.g. "0-13,112-125"
};

/// What one node holds.
struct NodeInfo {
  std::string host;
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  std::vector<DeviceInfo> gpus;
  std::vector<DeviceInfo> nics;
};

/// Where every rank of a job runs: its node and local rank, and what each node holds. Read-only.
///
/// Made from hwloc discovery under a launcher (`discover`), from an hwloc XML file
/// (`MESHCOMM_TOPOLOGY_XML`, or `from_xml`), or simulated (`simulated`, `MESHCOMM_SIMULATE_NODES`,
/// or an explicit rank-to-node map), so that placement across nodes can be tried on one machine.
class MESHCOMM_API Topology {
 public:
  /// `world` ranks on nodes of `ranks_per_node` ranks, node-major (rank r on node r / ranks_per_node).
  static Topology simulated(int world, int ranks_per_node, const NodeInfo& node = {});
  /// Ranks on the nodes `node_of_rank` names (node ids 0..k-1, any order).
  static Topology from_rank_nodes(std::vector<int> node_of_rank, const NodeInfo& node = {});
  /// Collective over `world`: every rank discovers its node with hwloc and the results are
  /// exchanged. `MESHCOMM_TOPOLOGY_XML` replaces discovery with that file; with
  /// `MESHCOMM_SIMULATE_NODES=k` the ranks are spread over k simulated nodes, node-major.
  static Topology discover(Communicator& world);

  /// Reads one node from an hwloc XML file. Throws Error(invalid_argument) naming the file.
  static NodeInfo node_from_xml(const std::string& path);
  /// This machine, as hwloc sees it (no communication).
  static NodeInfo this_node();
  /// Where this process is bound, as hwloc sees it.
  static RankBinding this_binding();

  [[nodiscard]] int world_size() const noexcept { return static_cast<int>(node_of_rank_.size()); }
  [[nodiscard]] int node_count() const noexcept { return static_cast<int>(nodes_.size()); }
  [[nodiscard]] int node_of(int rank) const { return node_of_rank_.at(rank); }
  /// Rank within its node, counting in rank order.
  [[nodiscard]] int local_rank(int rank) const { return local_rank_.at(rank); }
  /// Ranks on `node`, in rank order.
  [[nodiscard]] const std::vector<int>& ranks_on(int node) const { return ranks_on_node_.at(node); }
  /// The most ranks any node holds.
  [[nodiscard]] int max_ranks_per_node() const noexcept;
  [[nodiscard]] const NodeInfo& node(int node) const { return nodes_.at(node); }
  /// Where `rank` is bound (unknown for simulated topologies).
  [[nodiscard]] const RankBinding& binding(int rank) const { return bindings_.at(rank); }

 private:
  Topology(std::vector<int> node_of_rank, std::vector<NodeInfo> nodes, std::vector<RankBinding> bindings = {});
  std::vector<int> node_of_rank_;
  std::vector<int> local_rank_;
  std::vector<std::vector<int>> ranks_on_node_;
  std::vector<NodeInfo> nodes_;
  std::vector<RankBinding> bindings_;
};

}  // namespace meshcomm
