#include "capi_support.hpp"

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommRingCreate(meshcommComm_t comm, const meshcommRingSpec_t* spec, meshcommRing_t* ring) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const char* function = "meshcommRingCreate";
    auto& result = output(ring, "ring", function);
    auto& handle = checked(comm, HandleMagic::comm, "comm", function);
    if (spec == nullptr) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("{}: spec is NULL; fill a meshcommRingSpec_t with MESHCOMM_RING_SPEC_INITIALIZER",
                                        function),
                            {.operation = function});
    }
    const meshcommRingSpec_t defaults = MESHCOMM_RING_SPEC_INITIALIZER;
    const auto given = read_config(spec, defaults, "spec", "MESHCOMM_RING_SPEC_INITIALIZER", function);
    const meshcomm::RingPipelineSpec pipeline{
        .block_bytes = given.block_bytes,
        .direction = given.backward != 0 ? meshcomm::RingDirection::backward : meshcomm::RingDirection::forward,
        .progress_thread = given.progress_thread != 0,
        .memory = memory_kind(given.memory, function)};
    result = new meshcommRing{.ring = meshcomm::RingPipeline::create(*handle.comm, pipeline),
                              .last_error = handle.last_error};
  });
}

meshcommResult_t meshcommRingCurrent(meshcommRing_t ring, void** block, size_t* bytes) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    const auto current = checked(ring, HandleMagic::ring, "ring", "meshcommRingCurrent").ring.current();
    if (block != nullptr) *block = current.data();
    if (bytes != nullptr) *bytes = current.size();
  });
}

meshcommResult_t meshcommRingStart(meshcommRing_t ring, void* stream, meshcommWork_t* work) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    auto& result = output(work, "work", "meshcommRingStart");
    auto& handle = checked(ring, HandleMagic::ring, "ring", "meshcommRingStart");
    result = wrap_work(handle.ring.start(meshcomm::StreamRef(stream)), handle.last_error);
  });
}

meshcommResult_t meshcommRingAdvance(meshcommRing_t ring, void* stream) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    checked(ring, HandleMagic::ring, "ring", "meshcommRingAdvance").ring.advance(meshcomm::StreamRef(stream));
  });
}

meshcommResult_t meshcommRingPeers(meshcommRing_t ring, int* send_peer, int* recv_peer) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    auto& handle = checked(ring, HandleMagic::ring, "ring", "meshcommRingPeers");
    if (send_peer != nullptr) *send_peer = handle.ring.send_peer();
    if (recv_peer != nullptr) *recv_peer = handle.ring.recv_peer();
  });
}

meshcommResult_t meshcommRingDestroy(meshcommRing_t ring) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    if (ring == nullptr) return;
    checked(ring, HandleMagic::ring, "ring", "meshcommRingDestroy").magic = HandleMagic::dead;
    delete ring;
  });
}

}  // extern "C"
