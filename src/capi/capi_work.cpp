#include "capi_support.hpp"

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommWorkTest(meshcommWork_t work, int* done) {
  return guarded(slot_of(work, HandleMagic::work), [&] {
    auto& result = output(done, "done", "meshcommWorkTest");
    result = checked(work, HandleMagic::work, "work", "meshcommWorkTest").work.test() ? 1 : 0;
  });
}

meshcommResult_t meshcommWorkWait(meshcommWork_t work, int64_t timeout_ms) {
  return guarded(slot_of(work, HandleMagic::work), [&] {
    checked(work, HandleMagic::work, "work", "meshcommWorkWait").work.wait(std::chrono::milliseconds{timeout_ms});
  });
}

meshcommResult_t meshcommWorkFree(meshcommWork_t work) {
  return guarded(slot_of(work, HandleMagic::work), [&] {
    if (work == nullptr) return;
    checked(work, HandleMagic::work, "work", "meshcommWorkFree").magic = HandleMagic::dead;
    delete work;
  });
}

}  // extern "C"
