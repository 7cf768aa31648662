#include <vector>

#include "capi_support.hpp"

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommHaloPlanCreate(meshcommComm_t comm, const meshcommHaloSpec_t* spec,
                                        meshcommHaloPlan_t* plan) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const char* function = "meshcommHaloPlanCreate";
    auto& result = output(plan, "plan", function);
    auto& handle = checked(comm, HandleMagic::comm, "comm", function);
    const meshcommHaloSpec_t defaults = MESHCOMM_HALO_SPEC_INITIALIZER;
    const auto given = read_required_config(spec, defaults, "spec", "MESHCOMM_HALO_SPEC_INITIALIZER", function);
    if (given.shard_rows == nullptr) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("{}: spec.shard_rows is NULL; give the rows of every rank's shard ({} entries)",
                                        function, handle.comm->size()),
                            {.operation = function});
    }
    const meshcomm::HaloSpec halo{
        .shard_rows = std::vector<std::size_t>(given.shard_rows, given.shard_rows + handle.comm->size()),
        .left = given.left,
        .right = given.right,
        .row_elements = given.row_elements,
        .type = data_type(given.type, function),
        .row_stride = given.row_stride,
        .periodic = given.periodic != 0,
        .strategy = checked_enum<meshcomm::HaloStrategy>(given.strategy, meshcommHaloRma + 1, "spec.strategy", function),
        .memory = memory_kind(given.memory, function)};
    result = new meshcommHaloPlan(meshcomm::HaloPlan::create(*handle.comm, halo), handle.last_error);
  });
}

meshcommResult_t meshcommHaloPlanRows(meshcommHaloPlan_t plan, size_t* extended_rows, size_t* own_first_row) {
  return guarded(slot_of(plan, HandleMagic::halo), [&] {
    auto& handle = checked(plan, HandleMagic::halo, "plan", "meshcommHaloPlanRows");
    if (extended_rows != nullptr) *extended_rows = handle.object.extended_rows();
    if (own_first_row != nullptr) *own_first_row = handle.object.own_first_row();
  });
}

meshcommResult_t meshcommHaloStart(meshcommHaloPlan_t plan, void* extended, void* stream, meshcommWork_t* work) {
  return guarded(slot_of(plan, HandleMagic::halo), [&] {
    auto& result = output(work, "work", "meshcommHaloStart");
    auto& handle = checked(plan, HandleMagic::halo, "plan", "meshcommHaloStart");
    result = wrap_work(handle.object.start(extended, meshcomm::StreamRef(stream)), handle.last_error);
  });
}

meshcommResult_t meshcommHaloStartAdjoint(meshcommHaloPlan_t plan, void* extended_gradient, void* stream,
                                          meshcommWork_t* work) {
  return guarded(slot_of(plan, HandleMagic::halo), [&] {
    auto& result = output(work, "work", "meshcommHaloStartAdjoint");
    auto& handle = checked(plan, HandleMagic::halo, "plan", "meshcommHaloStartAdjoint");
    result = wrap_work(handle.object.start_adjoint(extended_gradient, meshcomm::StreamRef(stream)), handle.last_error);
  });
}

meshcommResult_t meshcommHaloPlanDestroy(meshcommHaloPlan_t plan) {
  return guarded(slot_of(plan, HandleMagic::halo),
                 [&] { destroy_handle(plan, HandleMagic::halo, "plan", "meshcommHaloPlanDestroy"); });
}

}  // extern "C"
