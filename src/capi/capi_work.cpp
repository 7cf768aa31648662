#include "capi_support.hpp"

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommWorkTest(meshcommWork_t work, int* done) {
  return guarded(slot_of(work, HandleMagic::work), [&] {
    auto& result = output(done, "done", "meshcommWorkTest");
    result = checked(work, HandleMagic::work, "work", "meshcommWorkTest").object.test() ? 1 : 0;
  });
}

meshcommResult_t meshcommWorkWait(meshcommWork_t work, int64_t timeout_ms) {
  return guarded(slot_of(work, HandleMagic::work), [&] {
    checked(work, HandleMagic::work, "work", "meshcommWorkWait").object.wait(std::chrono::milliseconds{timeout_ms});
  });
}

meshcommResult_t meshcommWorkFree(meshcommWork_t work) {
  return guarded(slot_of(work, HandleMagic::work),
                 [&] { destroy_handle(work, HandleMagic::work, "work", "meshcommWorkFree"); });
}

}  // extern "C"
