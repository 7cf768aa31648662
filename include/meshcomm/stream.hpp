#pragma once

namespace meshcomm {

/// An opaque reference to a device stream (a `cudaStream_t` on CUDA; see cuda_interop.hpp).
///
/// Host-memory operations ignore it. A default-constructed `StreamRef` means "no stream":
/// on CUDA memory that is the legacy default stream.
class StreamRef {
 public:
  /// No stream.
  constexpr StreamRef() noexcept = default;
  /// Wraps a native stream handle without taking ownership.
  constexpr explicit StreamRef(void* native_handle) noexcept : handle_(native_handle) {}

  /// The native handle, or nullptr for "no stream".
  [[nodiscard]] constexpr void* native_handle() const noexcept { return handle_; }

 private:
  void* handle_ = nullptr;
};

}  // namespace meshcomm
