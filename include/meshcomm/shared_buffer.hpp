#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "meshcomm/export.hpp"

namespace meshcomm {

namespace detail {
class SharedSegment;
}

/// Host memory that the other ranks on this node can read directly, made by
/// `Communicator::allocate_shared` (the role of NCCL's ncclMemAlloc). Collectives whose buffers
/// live here on every rank copy each byte once, straight from the peer's memory, instead of
/// through the network stack. Any other memory works too, through the ordinary algorithms.
///
/// Move-only; freed when destroyed. It must outlive every operation that uses it.
class MESHCOMM_API SharedBuffer {
 public:
  SharedBuffer() noexcept;
  explicit SharedBuffer(std::shared_ptr<detail::SharedSegment> segment) noexcept;
  SharedBuffer(SharedBuffer&&) noexcept;
  SharedBuffer& operator=(SharedBuffer&&) noexcept;
  ~SharedBuffer();

  /// The memory (page-aligned), or nullptr for an empty buffer.
  [[nodiscard]] void* data() const noexcept;
  /// Its size in bytes: the request rounded up to whole pages.
  [[nodiscard]] std::size_t bytes() const noexcept;
  /// The memory as elements of `T`.
  template <class T>
  [[nodiscard]] std::span<T> as() const noexcept {
    return {static_cast<T*>(data()), bytes() / sizeof(T)};
  }

 private:
  std::shared_ptr<detail::SharedSegment> segment_;
};

}  // namespace meshcomm
