#include "perf_buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "verifiable/device_staging.hpp"

namespace meshcomm::perf {

PerfBuffer::PerfBuffer(const Communicator& comm, std::size_t bytes, bool user_buffers, MemoryKind memory) {
  if (bytes > std::numeric_limits<std::size_t>::max() - 4095) {
    throw std::length_error(fmt::format("a buffer of {} bytes is more than this machine can address", bytes));
  }
  size_ = std::max<std::size_t>(4096, (bytes + 4095) / 4096 * 4096);
  if (memory == MemoryKind::cuda) device_ = verifiable::device_bytes(size_);
  if (user_buffers || memory == MemoryKind::cuda) {
    plain_.reset(static_cast<std::byte*>(std::aligned_alloc(4096, size_)));
    if (plain_ == nullptr) {
      throw std::runtime_error(fmt::format("could not allocate a buffer of {} bytes; give a smaller -e", size_));
    }
    data_ = plain_.get();
  } else {
    shared_ = comm.allocate_shared(size_);
    data_ = static_cast<std::byte*>(shared_.data());
  }
  std::fill(data_, data_ + size_, std::byte{0});
  upload();
}

void PerfBuffer::upload() const {
  if (device_ != nullptr) verifiable::copy_to_device(device_.get(), data_, size_);
}

void PerfBuffer::download() const {
  if (device_ != nullptr) verifiable::copy_to_host(data_, device_.get(), size_);
}

void PerfBuffer::Free::operator()(std::byte* pointer) const noexcept { std::free(pointer); }

}  // namespace meshcomm::perf
