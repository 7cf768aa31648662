#include "capi_support.hpp"

using namespace meshcomm::capi;

namespace {

meshcommComm_t wrap_communicator(meshcomm::Communicator communicator) {
  auto* handle = new meshcommComm;
  handle->owned = std::make_unique<meshcomm::Communicator>(std::move(communicator));
  handle->comm = handle->owned.get();
  return handle;
}

meshcommComm& live(meshcommComm_t comm, const char* function) {
  return checked(comm, HandleMagic::comm, "comm", function);
}

}  // namespace

extern "C" {

meshcommResult_t meshcommCommCreate(meshcommBootstrap_t bootstrap, const meshcommCommConfig_t* config,
                                    meshcommComm_t* comm) {
  return guarded(nullptr, [&] {
    const char* function = "meshcommCommCreate";
    auto& result = output(comm, "comm", function);
    auto& source = checked(bootstrap, HandleMagic::bootstrap, "bootstrap", function);
    const meshcommCommConfig_t defaults = MESHCOMM_COMM_CONFIG_INITIALIZER;
    const auto options = read_config(config, defaults, "config", "MESHCOMM_COMM_CONFIG_INITIALIZER", function);
    if (options.timeout_ms < 0) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("{}: config.timeout_ms = {} must be 0 (the default) or positive", function,
                                        options.timeout_ms),
                            {.operation = function});
    }
    const auto backend = checked_enum<meshcomm::BackendKind>(options.backend, meshcommBackendNccl + 1, "config.backend",
                                                             function);
    result = wrap_communicator(meshcomm::Communicator::create(
        *source.bootstrap, {.backend = backend, .timeout = std::chrono::milliseconds{options.timeout_ms}}));
  });
}

meshcommResult_t meshcommCommSplit(meshcommComm_t comm, int color, int key, meshcommComm_t* newcomm) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    auto& result = output(newcomm, "newcomm", "meshcommCommSplit");
    result = wrap_communicator(live(comm, "meshcommCommSplit").comm->split(color, key));
  });
}

meshcommResult_t meshcommCommRank(meshcommComm_t comm, int* rank) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    output(rank, "rank", "meshcommCommRank") = live(comm, "meshcommCommRank").comm->rank();
  });
}

meshcommResult_t meshcommCommSize(meshcommComm_t comm, int* nranks) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    output(nranks, "nranks", "meshcommCommSize") = live(comm, "meshcommCommSize").comm->size();
  });
}

meshcommResult_t meshcommCommBackend(meshcommComm_t comm, const char** name) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    // to_string returns views of string literals, so the pointer stays valid.
    output(name, "name", "meshcommCommBackend") = meshcomm::to_string(live(comm, "meshcommCommBackend").comm->backend()).data();
  });
}

meshcommResult_t meshcommCommAbort(meshcommComm_t comm) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] { live(comm, "meshcommCommAbort").comm->abort(); });
}

meshcommResult_t meshcommCommDestroy(meshcommComm_t comm) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    if (comm == nullptr) return;
    auto& handle = live(comm, "meshcommCommDestroy");
    if (!handle.owned) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            "meshcommCommDestroy: comm belongs to a mesh (meshcommMeshComm); destroy the mesh instead",
                            {.operation = "meshcommCommDestroy"});
    }
    handle.magic = HandleMagic::dead;
    delete comm;
  });
}

meshcommResult_t meshcommMemAlloc(meshcommComm_t comm, size_t bytes, void** ptr) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    auto& result = output(ptr, "ptr", "meshcommMemAlloc");
    auto& handle = live(comm, "meshcommMemAlloc");
    if (bytes == 0) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument, "meshcommMemAlloc: bytes = 0; ask for at least 1",
                            {.operation = "meshcommMemAlloc"});
    }
    auto buffer = handle.comm->allocate_shared(bytes);
    void* data = buffer.data();
    handle.memory.emplace(data, std::move(buffer));
    result = data;
  });
}

meshcommResult_t meshcommMemFree(meshcommComm_t comm, void* ptr) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    auto& handle = live(comm, "meshcommMemFree");
    if (ptr == nullptr) return;
    if (handle.memory.erase(ptr) == 0) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("meshcommMemFree: ptr = {} did not come from meshcommMemAlloc on this "
                                        "communicator (or was freed already)",
                                        ptr),
                            {.operation = "meshcommMemFree"});
    }
  });
}

}  // extern "C"
