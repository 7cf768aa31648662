#include "meshcomm/topology.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "communicator_impl.hpp"
#include "environment.hpp"
#include "hwloc_discovery.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "setup_exchange.hpp"

namespace meshcomm {

namespace {

Error topology_error(const std::string& message) {
  return Error(ErrorCode::invalid_argument, message, {.operation = "Topology"});
}

/// What each rank tells the others about its node.
struct NodeRecord {
  char host[64] = {};
  std::int32_t packages = 0, numa_nodes = 0, cores = 0, gpus = 0, nics = 0;
  std::int32_t bound_package = -1, bound_numa_node = -1;
  char bound_cpus[64] = {};
};

}  // namespace

Topology::Topology(std::vector<int> node_of_rank, std::vector<NodeInfo> nodes, std::vector<RankBinding> bindings)
    : node_of_rank_(std::move(node_of_rank)), nodes_(std::move(nodes)), bindings_(std::move(bindings)) {
  bindings_.resize(node_of_rank_.size());
  ranks_on_node_.resize(nodes_.size());
  for (std::size_t rank = 0; rank < node_of_rank_.size(); ++rank) {
    auto& on_node = ranks_on_node_.at(node_of_rank_[rank]);
    local_rank_.push_back(static_cast<int>(on_node.size()));
    on_node.push_back(static_cast<int>(rank));
  }
}

int Topology::max_ranks_per_node() const noexcept {
  std::size_t most = 0;
  for (const auto& ranks : ranks_on_node_) most = std::max(most, ranks.size());
  return static_cast<int>(most);
}

Topology Topology::simulated(int world, int ranks_per_node, const NodeInfo& node) {
  if (world < 1 || ranks_per_node < 1) {
    throw topology_error(fmt::format("world = {} and ranks_per_node = {} must both be at least 1", world,
                                     ranks_per_node));
  }
  std::vector<int> node_of_rank;
  for (int rank = 0; rank < world; ++rank) node_of_rank.push_back(rank / ranks_per_node);
  return from_rank_nodes(std::move(node_of_rank), node);
}

Topology Topology::from_rank_nodes(std::vector<int> node_of_rank, const NodeInfo& node) {
  if (node_of_rank.empty()) throw topology_error("the rank-to-node map is empty");
  const int nodes = *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank) {
    if (node_of_rank[rank] < 0) {
      throw topology_error(fmt::format("rank {} is on node {}; node ids are 0..k-1", rank, node_of_rank[rank]));
    }
  }
  std::vector<NodeInfo> infos(static_cast<std::size_t>(nodes), node);
  for (int n = 0; n < nodes; ++n) {
    if (infos[n].host.empty()) infos[n].host = fmt::format("node{}", n);
  }
  return Topology(std::move(node_of_rank), std::move(infos));
}

NodeInfo Topology::node_from_xml(const std::string& path) { return detail::load_node_xml(path); }
NodeInfo Topology::this_node() { return detail::discover_node(); }
RankBinding Topology::this_binding() { return detail::discover_binding(); }

namespace {

/// This rank's node: from the hwloc XML file MESHCOMM_TOPOLOGY_XML names, or discovered.
NodeInfo node_from_environment() {
  const auto path = detail::environment_variable("MESHCOMM_TOPOLOGY_XML");
  if (!path) return Topology::this_node();
  try {
    return Topology::node_from_xml(std::string(*path));
  } catch (const Error& error) {
    throw Error(error.code(), fmt::format("MESHCOMM_TOPOLOGY_XML = '{}': {}", *path, error.message()),
                error.context());
  }
}

}  // namespace

Topology Topology::discover(Communicator& world) {
  NodeInfo mine = node_from_environment();
  if (auto simulate = detail::environment_variable("MESHCOMM_SIMULATE_NODES")) {
    int nodes = 0;
    const auto [end, error] = std::from_chars(simulate->data(), simulate->data() + simulate->size(), nodes);
    if (error != std::errc{} || end != simulate->data() + simulate->size() || nodes < 1 || nodes > world.size()) {
      throw topology_error(fmt::format("MESHCOMM_SIMULATE_NODES = '{}' must be a number of nodes from 1 to {}",
                                       *simulate, world.size()));
    }
    std::vector<int> node_of_rank;
    for (int rank = 0; rank < world.size(); ++rank) {
      node_of_rank.push_back(static_cast<int>(static_cast<long>(rank) * nodes / world.size()));
    }
    return from_rank_nodes(std::move(node_of_rank), mine);
  }
  NodeRecord record;
  std::strncpy(record.host, mine.host.c_str(), sizeof record.host - 1);
  record.packages = mine.packages;
  record.numa_nodes = mine.numa_nodes;
  record.cores = mine.cores;
  record.gpus = static_cast<std::int32_t>(mine.gpus.size());
  record.nics = static_cast<std::int32_t>(mine.nics.size());
  const auto binding = this_binding();
  record.bound_package = binding.package;
  record.bound_numa_node = binding.numa_node;
  std::strncpy(record.bound_cpus, binding.cpus.c_str(), sizeof record.bound_cpus - 1);
  auto& impl = world.impl();
  const auto gathered =
      detail::exchange_all_gather(impl, std::as_bytes(std::span(&record, 1)), impl.begin("Topology::discover"));
  const auto* records = reinterpret_cast<const NodeRecord*>(gathered.data());
  // Nodes are numbered by first appearance in rank order, as NCCL orders its inter-node ring.
  std::map<std::string, int> node_ids;
  std::vector<int> node_of_rank;
  std::vector<NodeInfo> nodes;
  std::vector<RankBinding> bindings;
  for (int rank = 0; rank < world.size(); ++rank) {
    bindings.push_back({records[rank].bound_package, records[rank].bound_numa_node, records[rank].bound_cpus});
    const std::string host = records[rank].host;
    auto [it, added] = node_ids.emplace(host, static_cast<int>(nodes.size()));
    if (added) {
      NodeInfo node = host == mine.host ? mine : NodeInfo{};
      node.host = host;
      node.packages = records[rank].packages;
      node.numa_nodes = records[rank].numa_nodes;
      node.cores = records[rank].cores;
      if (host != mine.host) {
        node.gpus.resize(static_cast<std::size_t>(records[rank].gpus));
        node.nics.resize(static_cast<std::size_t>(records[rank].nics));
      }
      nodes.push_back(std::move(node));
    }
    node_of_rank.push_back(it->second);
  }
  return Topology(std::move(node_of_rank), std::move(nodes), std::move(bindings));
}

}  // namespace meshcomm
