#pragma once

#include <cstddef>
#include <memory>

#include "meshcomm/communicator.hpp"

namespace meshcomm::perf {

/// A benchmark buffer: plain page-aligned memory (--buffers user, as the tensors a trainer has),
/// meshcomm shared memory (--buffers shared: the single-copy path, as nccl-tests can use
/// ncclMemAlloc), or with --memory cuda device memory. `host()` is where data is filled and
/// checked; `upload`/`download` stage it to and from the device (no-ops on host memory).
class PerfBuffer {
 public:
  /// At least `bytes` (rounded up to whole pages) on `comm`; throws when they cannot be had.
  PerfBuffer(const Communicator& comm, std::size_t bytes, bool user_buffers, MemoryKind memory);
  /// Where the measured calls read and write.
  [[nodiscard]] std::byte* data() const noexcept { return device_ != nullptr ? device_.get() : data_; }
  /// The host copy, where data is filled and checked.
  [[nodiscard]] std::byte* host() const noexcept { return data_; }
  /// Copies the host copy to the device buffer (nothing on host memory).
  void upload() const;
  /// Copies the device buffer to the host copy (nothing on host memory).
  void download() const;

 private:
  struct Free {
    void operator()(std::byte* pointer) const noexcept;
  };
  SharedBuffer shared_;
  std::unique_ptr<std::byte, Free> plain_;
  std::shared_ptr<std::byte> device_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace meshcomm::perf
