#include "link_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace meshcomm::advisor {

GroupLinks group_links(const std::vector<std::vector<int>>& groups, const Topology& topology, int nics_per_node) {
  GroupLinks links;
  if (groups.empty()) return links;
  links.ranks = static_cast<int>(groups.front().size());
  const double nics = std::max(1, nics_per_node);
  std::map<int, int> edges_leaving, crossing_senders;
  for (const auto& group : groups) {
    std::map<int, int> members_on;
    for (int rank : group) members_on[topology.node_of(rank)] += 1;
    if (members_on.size() < 2) continue;
    links.crosses_nodes = true;
    const auto size = group.size();
    for (std::size_t i = 0; i < size; ++i) {
      const int node = topology.node_of(group[i]);
      if (node != topology.node_of(group[(i + 1) % size])) edges_leaving[node] += 1;
      crossing_senders[node] += 1;
      const double off_node = static_cast<double>(size) - members_on[node];
      links.cross_share = std::max(links.cross_share, off_node / static_cast<double>(size - 1));
    }
  }
  for (const auto& [node, edges] : edges_leaving)
    links.ring_flows_per_nic = std::max(links.ring_flows_per_nic, edges / nics);
  for (const auto& [node, senders] : crossing_senders) {
    links.senders_per_nic = std::max(links.senders_per_nic, senders / nics);
  }
  return links;
}

double collective_seconds(const MachineModel& machine, CollectiveOp op, double bytes, const GroupLinks& links) {
  const int ranks = links.ranks;
  if (ranks <= 1 || bytes <= 0) return 0;
  if (!links.crosses_nodes) {
    if (const auto* fit = machine.fit_for(op, ranks)) return fit->time_us(bytes) * 1e-6;
  }
  const double p = ranks;
  const double intra = machine.intra.bandwidth_gbps * 1e9;
  const double inter = machine.inter.bandwidth_gbps * 1e9;
  const double latency = (links.crosses_nodes ? machine.inter.latency_us : machine.intra.latency_us) * 1e-6;
  // A ring step runs at its slowest edge: inside the node, or a NIC shared by the edges leaving it.
  const double ring_bandwidth =
      links.crosses_nodes ? std::min(intra, inter / std::max(1.0, links.ring_flows_per_nic)) : intra;
  const double share = bytes / p;
  switch (op) {
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return (p - 1) * (latency + share / ring_bandwidth);
    case CollectiveOp::all_reduce: {
      const double ring = 2 * (p - 1) * (latency + share / ring_bandwidth);
      const double doubling = std::ceil(std::log2(p)) * (latency + bytes / ring_bandwidth);
      return std::min(ring, doubling);
    }
    case CollectiveOp::alltoall: {
      const double sent = (p - 1) * share;
      const double on_node = sent * (1 - links.cross_share) / intra;
      const double off_node =
          links.crosses_nodes ? sent * links.cross_share * std::max(1.0, links.senders_per_nic) / inter : 0;
      return (p - 1) * latency + std::max(on_node, off_node);
    }
    case CollectiveOp::sendrecv:
      return latency + bytes / ring_bandwidth;
  }
  return 0;
}

}  // namespace meshcomm::advisor
