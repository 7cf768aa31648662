#pragma once

#include <string>

#include "meshcomm/topology.hpp"

namespace meshcomm::detail {

/// This machine as hwloc sees it: packages, NUMA nodes, cores, GPUs and NICs (with PCI bus ids
/// and NUMA affinity). Without hwloc in the build: the host name and the core count only.
NodeInfo discover_node();

/// Where this process is bound: its package and NUMA node when it stays inside one, and its CPUs.
RankBinding discover_binding();

/// One node read from an hwloc XML file. Throws Error(invalid_argument) naming the file.
NodeInfo load_node_xml(const std::string& path);

}  // namespace meshcomm::detail
