#pragma once

// What every function of the C ABI shares: the objects behind the opaque handles, their checks,
// the guard that turns every exception into a result code and a message, and the reading of
// versioned config structs.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/halo.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/meshcomm.h"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::capi {

/// The message of the last failure on one communicator (shared with the objects made from it).
struct LastError {
  std::string message;
};

/// Tags that tell a live handle of each kind from anything else.
enum class HandleMagic : std::uint64_t {
  bootstrap = 0x6d63626f6f740001,
  comm = 0x6d63636f6d6d0002,
  work = 0x6d63776f726b0003,
  mesh = 0x6d636d6573680004,
  halo = 0x6d6368616c6f0005,
  ring = 0x6d6372696e670006,
  dead = 0xdeaddeaddeaddead,
};

}  // namespace meshcomm::capi

struct meshcommBootstrap {
  meshcomm::capi::HandleMagic magic = meshcomm::capi::HandleMagic::bootstrap;
  std::unique_ptr<meshcomm::Bootstrap> bootstrap;
  std::string name;
};

struct meshcommComm {
  meshcomm::capi::HandleMagic magic = meshcomm::capi::HandleMagic::comm;
  std::unique_ptr<meshcomm::Communicator> owned;  ///< empty when a mesh owns the communicator
  meshcomm::Communicator* comm = nullptr;
  std::shared_ptr<meshcomm::capi::LastError> last_error = std::make_shared<meshcomm::capi::LastError>();
  std::map<void*, meshcomm::SharedBuffer> memory;  ///< from meshcommMemAlloc
};

namespace meshcomm::capi {

/// A handle that holds one object of the library and reports into its communicator's slot.
template <class Object, HandleMagic kMagic>
struct ObjectHandle {
  ObjectHandle(Object made, std::shared_ptr<LastError> slot) : object(std::move(made)), last_error(std::move(slot)) {}
  HandleMagic magic = kMagic;
  Object object;
  std::shared_ptr<LastError> last_error;
};

}  // namespace meshcomm::capi

struct meshcommWork : meshcomm::capi::ObjectHandle<meshcomm::Work, meshcomm::capi::HandleMagic::work> {
  using ObjectHandle::ObjectHandle;
};

struct meshcommMesh {
  meshcomm::capi::HandleMagic magic = meshcomm::capi::HandleMagic::mesh;
  std::unique_ptr<meshcomm::Mesh> mesh;
  std::shared_ptr<meshcomm::capi::LastError> last_error;
  std::map<std::string, std::unique_ptr<meshcommComm>> comms;  ///< by axis list, as asked
};

struct meshcommHaloPlan : meshcomm::capi::ObjectHandle<meshcomm::HaloPlan, meshcomm::capi::HandleMagic::halo> {
  using ObjectHandle::ObjectHandle;
};

struct meshcommRing : meshcomm::capi::ObjectHandle<meshcomm::RingPipeline, meshcomm::capi::HandleMagic::ring> {
  using ObjectHandle::ObjectHandle;
};

namespace meshcomm::capi {

/// This thread's last failure that had no valid communicator.
LastError& thread_error();

/// The result code of an error code.
meshcommResult_t result_of(ErrorCode code) noexcept;

/// Runs `body`; an exception becomes its result code, with its message kept in `slot` (null:
/// this thread's).
template <class Body>
meshcommResult_t guarded(LastError* slot, Body&& body) noexcept {
  LastError& target = slot != nullptr ? *slot : thread_error();
  try {
    body();
    return meshcommSuccess;
  } catch (const Error& error) {
    target.message = error.what();
    return result_of(error.code());
  } catch (const std::bad_alloc&) {
    target.message = "out of memory";
    return meshcommInternalError;
  } catch (const std::exception& error) {
    target.message = fmt::format("internal error: {}", error.what());
    return meshcommInternalError;
  } catch (...) {
    target.message = "internal error: an unknown exception";
    return meshcommInternalError;
  }
}

/// The error slot of a handle that is alive, else null (this thread's).
template <class Handle>
LastError* slot_of(const Handle* handle, HandleMagic magic) noexcept {
  if (handle == nullptr || handle->magic != magic) return nullptr;
  return handle->last_error.get();
}

/// Throws Error(invalid_argument) naming `argument` unless `handle` is a live handle of its kind.
template <class Handle>
Handle& checked(Handle* handle, HandleMagic magic, const char* argument, const char* function) {
  if (handle == nullptr || handle->magic != magic) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} is {}; pass a handle its create function returned and that was not destroyed",
                            function, argument, handle == nullptr ? "NULL" : "not a live handle of that kind"),
                {.operation = function});
  }
  return *handle;
}

/// Throws Error(invalid_argument) naming `argument` if the output pointer is NULL.
template <class T>
T& output(T* pointer, const char* argument, const char* function) {
  if (pointer == nullptr) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the output {} is NULL", function, argument),
                {.operation = function});
  }
  return *pointer;
}

/// Checks the size/magic/version header of a config struct that starts with them, and returns a
/// copy whose fields beyond what the caller's header knew keep `defaults`. A NULL `given` is the
/// defaults.
template <class Config>
Config read_config(const Config* given, const Config& defaults, const char* argument, const char* initializer,
                   const char* function) {
  if (given == nullptr) return defaults;
  const std::size_t header = sizeof(std::size_t) + 2 * sizeof(unsigned int);
  if (given->magic != MESHCOMM_CONFIG_MAGIC) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} was not initialised (magic is {:#x}, expected {:#x}): fill it with {} first",
                            function, argument, given->magic, MESHCOMM_CONFIG_MAGIC, initializer),
                {.operation = function});
  }
  if (given->size <= header || given->size > sizeof(Config)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {}.size = {} is not a size of this struct (at most {} in this library, version {}); "
                            "fill it with {}",
                            function, argument, given->size, sizeof(Config), MESHCOMM_VERSION_CODE, initializer),
                {.operation = function});
  }
  Config config = defaults;
  std::memcpy(static_cast<void*>(&config), static_cast<const void*>(given), given->size);
  return config;
}

/// As read_config, for a config the call cannot do without: NULL is refused, naming `initializer`.
template <class Config>
Config read_required_config(const Config* given, const Config& defaults, const char* argument,
                            const char* initializer, const char* function) {
  if (given == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} is NULL; fill one with {}", function, argument, initializer),
                {.operation = function});
  }
  return read_config(given, defaults, argument, initializer, function);
}

/// Destroys a live handle (NULL: nothing), marking it dead first so a later use is told apart.
template <class Handle>
void destroy_handle(Handle* handle, HandleMagic magic, const char* argument, const char* function) {
  if (handle == nullptr) return;
  checked(handle, magic, argument, function).magic = HandleMagic::dead;
  delete handle;
}

/// An enum value from the C ABI, checked to be in [0, count).
template <class Enum>
Enum checked_enum(int value, int count, const char* argument, const char* function) {
  if (value < 0 || value >= count) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} = {} is not one of the {} values in meshcomm.h", function, argument, value, count),
                {.operation = function});
  }
  return static_cast<Enum>(value);
}

/// The checked C data type as meshcomm's.
DataType data_type(meshcommDataType_t type, const char* function);
/// The checked C memory kind as meshcomm's.
MemoryKind memory_kind(meshcommMemory_t memory, const char* function);

/// Wraps a started operation in a handle that reports into `slot`.
meshcommWork_t wrap_work(Work work, const std::shared_ptr<LastError>& slot);

}  // namespace meshcomm::capi
