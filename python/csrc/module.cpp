// The Python module meshcomm.torch._C: the process group class torch.distributed instantiates
// for backend "meshcomm", the group registry the ops use, and the C++ mesh's groups.

#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <mutex>

#include "direct_calls.hpp"
#include "group_registry.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/placement.hpp"
#include "meshcomm/pmix_bootstrap.hpp"
#include "meshcomm/topology.hpp"

namespace meshcomm::torch_plugin {

namespace {

std::mutex registry_mutex;
std::map<std::string, c10::intrusive_ptr<ProcessGroupMeshcomm>>& registry() {
  static std::map<std::string, c10::intrusive_ptr<ProcessGroupMeshcomm>> groups;
  return groups;
}

/// Every group over `axes` of the mesh `dims` on `world` ranks placed by `placement` with
/// `ranks_per_node` ranks on each node: as the C++ Mesh makes them.
std::vector<std::vector<int>> mesh_groups(const std::string& dims, int world, const std::string& placement,
                                          int ranks_per_node, const std::string& axes) {
  const auto spec = MeshSpec::parse(dims).resolved(world);
  const auto topology = Topology::simulated(world, ranks_per_node);
  const auto policy = Placement::parse(placement);
  const auto coordinates = place_ranks(spec, policy, topology);
  const auto names = split_axis_list(axes);
  std::vector<std::size_t> chosen;
  for (const auto name : names) {
    const auto found = spec.find(name);
    if (!found) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("init_mesh: axis '{}' is not in the mesh '{}'", name, spec.to_string()),
                  {.operation = "init_mesh"});
    }
    chosen.push_back(*found);
  }
  // Ranks sharing every coordinate outside `axes` form a group, ordered by their coordinates on `axes`.
  std::map<std::vector<int>, std::map<std::vector<int>, int>> groups;
  for (int rank = 0; rank < world; ++rank) {
    const auto& mine = coordinates[static_cast<std::size_t>(rank)];
    std::vector<int> outside, inside;
    for (std::size_t axis = 0; axis < mine.size(); ++axis) {
      if (std::find(chosen.begin(), chosen.end(), axis) == chosen.end()) outside.push_back(mine[axis]);
    }
    for (auto axis : chosen) inside.push_back(mine[axis]);
    groups[outside][inside] = rank;
  }
  std::vector<std::vector<int>> result;
  for (const auto& [outside, members] : groups) {
    std::vector<int> ranks;
    for (const auto& [inside, rank] : members) ranks.push_back(rank);
    result.push_back(std::move(ranks));
  }
  std::sort(result.begin(), result.end());
  return result;
}

/// Under a PMIx launcher (mpirun, srun): rank 0's `address` as every rank's answer, so that a
/// torch store can be met without torchrun's variables.
std::string rank0_address(const std::string& address) {
  PmixBootstrap bootstrap;
  std::vector<std::byte> mine(256);
  if (bootstrap.rank() == 0) {
    if (address.size() >= mine.size()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("address '{}' is longer than 255 bytes", address),
                  {.operation = "rank0_address"});
    }
    std::memcpy(mine.data(), address.data(), address.size());
  }
  const auto all = bootstrap.all_gather(mine);
  return std::string(reinterpret_cast<const char*>(all.data()));
}

}  // namespace

void register_group(const std::string& name, const c10::intrusive_ptr<ProcessGroupMeshcomm>& group) {
  std::lock_guard lock(registry_mutex);
  registry()[name] = group;
}

void forget_group(const std::string& name) {
  std::lock_guard lock(registry_mutex);
  registry().erase(name);
}

c10::intrusive_ptr<ProcessGroupMeshcomm> group_named(const std::string& name, const char* call) {
  std::lock_guard lock(registry_mutex);
  const auto found = registry().find(name);
  if (found != registry().end()) return found->second;
  std::string known;
  for (const auto& [known_name, group] : registry()) known += (known.empty() ? "" : ", ") + known_name;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: no meshcomm process group is called '{}' (known: {}); pass a group made with "
                          "backend=\"meshcomm\"",
                          call, name, known.empty() ? "none" : known),
              {.backend = "meshcomm (torch)", .operation = call});
}

}  // namespace meshcomm::torch_plugin

PYBIND11_MODULE(_C, module) {
  namespace plugin = meshcomm::torch_plugin;
  pybind11::module_::import("torch.distributed");
  pybind11::class_<plugin::ProcessGroupMeshcomm, c10d::ProcessGroup, c10::intrusive_ptr<plugin::ProcessGroupMeshcomm>>(
      module, "ProcessGroupMeshcomm")
      .def(pybind11::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                             std::chrono::milliseconds timeout) {
             return c10::make_intrusive<plugin::ProcessGroupMeshcomm>(store, rank, size, timeout);
           }),
           pybind11::arg("store"), pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("timeout"),
           pybind11::call_guard<pybind11::gil_scoped_release>())
      .def("backend", [](plugin::ProcessGroupMeshcomm& group) {
        return std::string(meshcomm::to_string(group.communicator().backend()));
      });
  module.def("register_group", &plugin::register_group, pybind11::arg("name"), pybind11::arg("group"));
  module.def("forget_group", &plugin::forget_group, pybind11::arg("name"));
  module.def(
      "mesh_axes",
      [](const std::string& dims, int world) {
        const auto spec = meshcomm::MeshSpec::parse(dims).resolved(world);
        std::vector<std::string> names;
        for (const auto& axis : spec.axes()) names.push_back(axis.name);
        return names;
      },
      pybind11::arg("dims"), pybind11::arg("world"));
  module.def("rank0_address", &plugin::rank0_address, pybind11::arg("address"),
             pybind11::call_guard<pybind11::gil_scoped_release>());
  module.def("mesh_groups", &plugin::mesh_groups, pybind11::arg("dims"), pybind11::arg("world"),
             pybind11::arg("placement"), pybind11::arg("ranks_per_node"), pybind11::arg("axes"));
  module.def(
      "_time_direct_calls",
      [](const std::string& group, const std::string& operation, const at::Tensor& source, const at::Tensor& target,
         int iterations) {
        return plugin::time_direct_calls(*plugin::group_named(group, "time_direct_calls"), operation, source, target,
                                         iterations);
      },
      pybind11::arg("group"), pybind11::arg("operation"), pybind11::arg("source"), pybind11::arg("target"),
      pybind11::arg("iterations"), pybind11::call_guard<pybind11::gil_scoped_release>());
  pybind11::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const meshcomm::Error& failure) {
      PyErr_SetString(failure.code() == meshcomm::ErrorCode::timeout ? PyExc_TimeoutError : PyExc_RuntimeError,
                      failure.what());
    }
  });
}
