#pragma once

#include <vector>

#include "machine_model.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm::advisor {

/// How the groups of one axis (or axis set) meet the network when they all run a collective at once.
struct GroupLinks {
  int ranks = 1;                  ///< ranks per group
  bool crosses_nodes = false;     ///< some group spans nodes
  double ring_flows_per_nic = 0;  ///< ring edges leaving the busiest node, per NIC
  double cross_share = 0;         ///< of a rank's peers, the largest share on other nodes
  double senders_per_nic = 0;     ///< ranks of the busiest node whose group crosses nodes, per NIC
};

/// The links of `groups` (as placement gives them, ring order) on `topology`.
GroupLinks group_links(const std::vector<std::vector<int>>& groups, const Topology& topology, int nics_per_node);

/// Seconds of one collective over a group: the calibrated fit where the group stays on one node
/// and the calibration measured that op at that size of group, else alpha-beta on the links —
/// ring or pairwise for all-gather, reduce-scatter, all-reduce (or recursive doubling when
/// shorter) and all-to-all, one message for send-recv. `bytes` is the whole buffer as the
/// perftests report it (all-gather: the output; reduce-scatter: the input; send-recv: the message).
double collective_seconds(const MachineModel& machine, CollectiveOp op, double bytes, const GroupLinks& links);

}  // namespace meshcomm::advisor
