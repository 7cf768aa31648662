#include "capi_support.hpp"

namespace meshcomm::capi {

LastError& thread_error() {
  thread_local LastError error;
  return error;
}

meshcommResult_t result_of(ErrorCode code) noexcept {
  return static_cast<meshcommResult_t>(static_cast<int>(code) + 1);
}

DataType data_type(meshcommDataType_t type, const char* function) {
  return checked_enum<DataType>(type, static_cast<int>(meshcommUint64) + 1, "type", function);
}

MemoryKind memory_kind(meshcommMemory_t memory, const char* function) {
  return checked_enum<MemoryKind>(memory, static_cast<int>(meshcommMemoryCuda) + 1, "memory", function);
}

meshcommWork_t wrap_work(Work work, const std::shared_ptr<LastError>& slot) { return new meshcommWork(std::move(work), slot); }

}  // namespace meshcomm::capi

// The codes must mirror meshcomm::ErrorCode one to one.
static_assert(static_cast<int>(meshcomm::ErrorCode::invalid_argument) + 1 == meshcommInvalidArgument);
static_assert(static_cast<int>(meshcomm::ErrorCode::internal) + 1 == meshcommInternalError);
static_assert(static_cast<int>(meshcomm::DataType::u64) == meshcommUint64);
static_assert(static_cast<int>(meshcomm::ReduceOp::avg) == meshcommAvg);
static_assert(static_cast<int>(meshcomm::BackendKind::nccl) == meshcommBackendNccl);
static_assert(static_cast<int>(meshcomm::HaloStrategy::rma) == meshcommHaloRma);

extern "C" {

meshcommResult_t meshcommGetVersion(int* version) {
  return meshcomm::capi::guarded(nullptr, [&] {
    meshcomm::capi::output(version, "version", "meshcommGetVersion") = MESHCOMM_VERSION_CODE;
  });
}

const char* meshcommGetErrorString(meshcommResult_t result) {
  switch (result) {
    case meshcommSuccess: return "success";
    case meshcommInvalidArgument: return "invalid argument";
    case meshcommTimeout: return "timeout";
    case meshcommSizeMismatch: return "size mismatch between ranks";
    case meshcommPeerFailure: return "a peer failed or vanished";
    case meshcommUnsupported: return "unsupported by this backend or build";
    case meshcommBackendFailure: return "the underlying engine reported an error";
    case meshcommAborted: return "the communicator was aborted";
    case meshcommInternalError: return "internal error";
    case meshcommNumResults: break;
  }
  return "unknown result code";
}

const char* meshcommGetLastError(meshcommComm_t comm) {
  const auto* slot = meshcomm::capi::slot_of(comm, meshcomm::capi::HandleMagic::comm);
  return slot != nullptr ? slot->message.c_str() : meshcomm::capi::thread_error().message.c_str();
}

}  // extern "C"
