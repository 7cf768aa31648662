#include "capi_support.hpp"

using namespace meshcomm::capi;

namespace {

const char* text_argument(const char* text, const char* argument, const char* function) {
  if (text == nullptr) {
    throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument, fmt::format("{}: {} is NULL", function, argument),
                          {.operation = function});
  }
  return text;
}

}  // namespace

extern "C" {

meshcommResult_t meshcommMeshCreate(meshcommComm_t world, const char* dims, const char* placement, int discover,
                                    meshcommMesh_t* mesh) {
  return guarded(slot_of(world, HandleMagic::comm), [&] {
    const char* function = "meshcommMeshCreate";
    auto& result = output(mesh, "mesh", function);
    auto& handle = checked(world, HandleMagic::comm, "world", function);
    const auto spec = meshcomm::MeshSpec::parse(text_argument(dims, "dims", function));
    meshcomm::MeshOptions options;
    if (placement != nullptr && *placement != '\0') options.placement = meshcomm::Placement::parse(placement);
    if (discover != 0) {
      options.topology = std::make_shared<const meshcomm::Topology>(meshcomm::Topology::discover(*handle.comm));
    }
    auto made = std::make_unique<meshcommMesh>();
    made->mesh = std::make_unique<meshcomm::Mesh>(meshcomm::Mesh::create(*handle.comm, spec, options));
    made->last_error = handle.last_error;
    result = made.release();
  });
}

meshcommResult_t meshcommMeshComm(meshcommMesh_t mesh, const char* axes, meshcommComm_t* comm) {
  return guarded(slot_of(mesh, HandleMagic::mesh), [&] {
    const char* function = "meshcommMeshComm";
    auto& result = output(comm, "comm", function);
    auto& handle = checked(mesh, HandleMagic::mesh, "mesh", function);
    const std::string key = text_argument(axes, "axes", function);
    auto& cached = handle.comms[key];
    if (!cached) {
      const auto names = meshcomm::split_axis_list(key);
      auto made = std::make_unique<meshcommComm>();
      try {
        made->comm = &handle.mesh->comm(names);
      } catch (...) {
        handle.comms.erase(key);
        throw;
      }
      cached = std::move(made);
    }
    result = cached.get();
  });
}

meshcommResult_t meshcommMeshCoordinate(meshcommMesh_t mesh, const char* axis, int* coordinate) {
  return guarded(slot_of(mesh, HandleMagic::mesh), [&] {
    const char* function = "meshcommMeshCoordinate";
    auto& result = output(coordinate, "coordinate", function);
    result = checked(mesh, HandleMagic::mesh, "mesh", function).mesh->coordinate(text_argument(axis, "axis", function));
  });
}

meshcommResult_t meshcommMeshDestroy(meshcommMesh_t mesh) {
  return guarded(slot_of(mesh, HandleMagic::mesh), [&] {
    if (mesh == nullptr) return;
    auto& handle = checked(mesh, HandleMagic::mesh, "mesh", "meshcommMeshDestroy");
    for (auto& [axes, comm] : handle.comms) comm->magic = HandleMagic::dead;
    handle.magic = HandleMagic::dead;
    delete mesh;
  });
}

}  // extern "C"
