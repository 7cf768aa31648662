#include "capi_support.hpp"

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommRingCreate(meshcommComm_t comm, const meshcommRingSpec_t* spec, meshcommRing_t* ring) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const char* function = "meshcommRingCreate";
    auto& result = output(ring, "ring", function);
    auto& handle = checked(comm, HandleMagic::comm, "comm", function);
    const meshcommRingSpec_t defaults = MESHCOMM_RING_SPEC_INITIALIZER;
    const auto given = read_required_config(spec, defaults, "spec", "MESHCOMM_RING_SPEC_INITIALIZER", function);
    const meshcomm::RingPipelineSpec pipeline{
        .block_bytes = given.block_bytes,
        .direction = given.backward != 0 ? meshcomm::RingDirection::backward : meshcomm::RingDirection::forward,
        .progress_thread = given.progress_thread != 0,
        .memory = memory_kind(given.memory, function)};
    result = new meshcommRing(meshcomm::RingPipeline::create(*handle.comm, pipeline), handle.last_error);
  });
}

meshcommResult_t meshcommRingCurrent(meshcommRing_t ring, void** block, size_t* bytes) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    const auto current = checked(ring, HandleMagic::ring, "ring", "meshcommRingCurrent").object.current();
    if (block != nullptr) *block = current.data();
    if (bytes != nullptr) *bytes = current.size();
  });
}

meshcommResult_t meshcommRingStart(meshcommRing_t ring, void* stream, meshcommWork_t* work) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    auto& result = output(work, "work", "meshcommRingStart");
    auto& handle = checked(ring, HandleMagic::ring, "ring", "meshcommRingStart");
    result = wrap_work(handle.object.start(meshcomm::StreamRef(stream)), handle.last_error);
  });
}

meshcommResult_t meshcommRingAdvance(meshcommRing_t ring, void* stream) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    checked(ring, HandleMagic::ring, "ring", "meshcommRingAdvance").object.advance(meshcomm::StreamRef(stream));
  });
}

meshcommResult_t meshcommRingPeers(meshcommRing_t ring, int* send_peer, int* recv_peer) {
  return guarded(slot_of(ring, HandleMagic::ring), [&] {
    auto& handle = checked(ring, HandleMagic::ring, "ring", "meshcommRingPeers");
    if (send_peer != nullptr) *send_peer = handle.object.send_peer();
    if (recv_peer != nullptr) *recv_peer = handle.object.recv_peer();
  });
}

meshcommResult_t meshcommRingDestroy(meshcommRing_t ring) {
  return guarded(slot_of(ring, HandleMagic::ring),
                 [&] { destroy_handle(ring, HandleMagic::ring, "ring", "meshcommRingDestroy"); });
}

}  // extern "C"
