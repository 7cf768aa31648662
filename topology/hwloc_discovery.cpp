// The only file that includes hwloc.h.

#include "hwloc_discovery.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "meshcomm/config.hpp"
#include "meshcomm/error.hpp"

#if MESHCOMM_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace meshcomm::detail {

namespace {

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

#if MESHCOMM_HAVE_HWLOC

/// Owns an hwloc topology.
class HwlocTopology {
 public:
  HwlocTopology() { hwloc_topology_init(&topology_); }
  ~HwlocTopology() { hwloc_topology_destroy(topology_); }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  [[nodiscard]] hwloc_topology_t get() const noexcept { return topology_; }

 private:
  hwloc_topology_t topology_{};
};

int numa_of(hwloc_topology_t topology, hwloc_obj_t device) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, device);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  return hwloc_bitmap_first(ancestor->nodeset);
}

/// One entry per PCI device (a GPU shows as cuda* and nvml*, a NIC as mlx5_* and its network
/// interface), preferring names that start with `preferred`.
std::vector<DeviceInfo> one_per_device(const std::vector<DeviceInfo>& devices, std::string_view preferred) {
  std::vector<DeviceInfo> unique;
  for (const auto& device : devices) {
    auto same = std::find_if(unique.begin(), unique.end(), [&](const DeviceInfo& other) {
      return !device.pci_bus_id.empty() && other.pci_bus_id == device.pci_bus_id;
    });
    if (same == unique.end()) {
      unique.push_back(device);
    } else if (device.name.starts_with(preferred)) {
      *same = device;
    }
  }
  return unique;
}

std::string bus_id_of(hwloc_obj_t device) {
  if (device->parent == nullptr || device->parent->type != HWLOC_OBJ_PCI_DEVICE) return {};
  const auto& pci = device->parent->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
}

/// NVLink peers from the "NVLinkBandwidth" distances hwloc's NVML backend publishes (MB/s between
/// GPU OS devices): a peer is any GPU with a non-zero bandwidth.
void add_nvlink_peers(hwloc_topology_t topology, std::vector<DeviceInfo>& gpus) {
  unsigned count = 1;
  hwloc_distances_s* distances = nullptr;
  if (hwloc_distances_get_by_name(topology, "NVLinkBandwidth", &count, &distances, 0) != 0 || count == 0) return;
  auto index_of = [&](hwloc_obj_t object) {
    const auto bus = bus_id_of(object);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (!bus.empty() && gpus[g].pci_bus_id == bus) return static_cast<int>(g);
    }
    return -1;
  };
  for (unsigned i = 0; i < distances->nbobjs; ++i) {
    const int from = index_of(distances->objs[i]);
    if (from < 0) continue;
    for (unsigned j = 0; j < distances->nbobjs; ++j) {
      const int to = index_of(distances->objs[j]);
      if (to >= 0 && to != from && distances->values[i * distances->nbobjs + j] > 0) gpus[from].nvlink_peers.push_back(to);
    }
  }
  hwloc_distances_release(topology, distances);
}

NodeInfo read(hwloc_topology_t topology, std::string host) {
  NodeInfo node;
  node.host = std::move(host);
  node.packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  node.numa_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  node.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  for (hwloc_obj_t device = hwloc_get_next_osdev(topology, nullptr); device != nullptr;
       device = hwloc_get_next_osdev(topology, device)) {
    const std::string name = device->name != nullptr ? device->name : "";
    const std::string bus_id = bus_id_of(device);
    DeviceInfo info{name, bus_id, numa_of(topology, device), {}};
    const auto type = device->attr->osdev.type;
    // CUDA devices appear twice (cuda* and nvml*); count the cuda ones, or nvml where only those exist.
    if ((type == HWLOC_OBJ_OSDEV_COPROC && name.starts_with("cuda")) ||
        (type == HWLOC_OBJ_OSDEV_GPU && name.starts_with("nvml"))) {
      node.gpus.push_back(info);
    } else if (type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
               (type == HWLOC_OBJ_OSDEV_NETWORK && !bus_id.empty())) {
      node.nics.push_back(info);
    }
  }
  node.gpus = one_per_device(node.gpus, "cuda");
  node.nics = one_per_device(node.nics, "mlx");
  add_nvlink_peers(topology, node.gpus);
  return node;
}

#endif

}  // namespace

NodeInfo discover_node() {
#if MESHCOMM_HAVE_HWLOC
  HwlocTopology topology;
  hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topology.get()) == 0) return read(topology.get(), host_name());
#endif
  NodeInfo node;
  node.host = host_name();
  node.packages = 1;
  node.numa_nodes = 1;
  node.cores = static_cast<int>(std::thread::hardware_concurrency());
  return node;
}

RankBinding discover_binding() {
  RankBinding binding;
#if MESHCOMM_HAVE_HWLOC
  HwlocTopology topology;
  if (hwloc_topology_load(topology.get()) != 0) return binding;
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topology.get(), cpus, HWLOC_CPUBIND_PROCESS) == 0) {
    char* text = nullptr;
    hwloc_bitmap_list_asprintf(&text, cpus);
    binding.cpus = text != nullptr ? text : "";
    std::free(text);
    auto inside = [&](hwloc_obj_type_t type) {
      hwloc_obj_t object = hwloc_get_obj_covering_cpuset(topology.get(), cpus);
      while (object != nullptr && object->type != type) object = object->parent;
      return object != nullptr ? static_cast<int>(object->logical_index) : -1;
    };
    binding.package = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_PACKAGE) > 0 ? inside(HWLOC_OBJ_PACKAGE) : -1;
    // A NUMA node is a memory child in hwloc 2: find the one whose cpuset covers the binding.
    for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, nullptr); numa != nullptr;
         numa = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, numa)) {
      if (hwloc_bitmap_isincluded(cpus, numa->cpuset) != 0) binding.numa_node = static_cast<int>(numa->logical_index);
    }
  }
  hwloc_bitmap_free(cpus);
#endif
  return binding;
}

NodeInfo load_node_xml(const std::string& path) {
#if MESHCOMM_HAVE_HWLOC
  HwlocTopology topology;
  hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_set_xml(topology.get(), path.c_str()) != 0 || hwloc_topology_load(topology.get()) != 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("cannot read hwloc XML '{}': not a readable hwloc topology file (make one with lstopo "
                            "--of xml)",
                            path),
                {.operation = "Topology::node_from_xml"});
  }
  const char* host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topology.get()), "HostName");
  return read(topology.get(), host != nullptr ? host : path);
#else
  throw Error(ErrorCode::unsupported,
              fmt::format("cannot read '{}': this build has no hwloc (MESHCOMM_WITH_HWLOC=OFF)", path),
              {.operation = "Topology::node_from_xml"});
#endif
}

}  // namespace meshcomm::detail
