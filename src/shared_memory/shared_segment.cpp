#include "shared_segment.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "meshcomm/shared_buffer.hpp"

namespace meshcomm::detail {

SharedSegment::~SharedSegment() {
  if (auto registry = registry_.lock()) registry->forget(allocation_.base);
  allocation_.release();
}

std::shared_ptr<SharedSegment> SharedMemoryRegistry::create(std::size_t bytes) {
  auto allocation = provider_->allocate(bytes);
  {
    std::lock_guard lock(mutex_);
    own_[allocation.base] = {allocation.handle, allocation.bytes};
  }
  return std::make_shared<SharedSegment>(std::move(allocation), weak_from_this());
}

std::optional<SegmentLocation> SharedMemoryRegistry::locate(const void* pointer, std::size_t bytes) const {
  const auto* address = static_cast<const std::byte*>(pointer);
  std::lock_guard lock(mutex_);
  auto after = own_.upper_bound(address);
  if (after == own_.begin()) return std::nullopt;
  const auto& [base, segment] = *std::prev(after);
  const auto offset = static_cast<std::size_t>(address - base);
  if (offset + bytes > segment.second) return std::nullopt;
  return SegmentLocation{segment.first, offset};
}

std::uint64_t host_identity() {
  // Asked by every shm call: the system call costs about as much as a small message.
  static const std::uint64_t identity = [] {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return std::hash<std::string>{}(name);
  }();
  return identity;
}

SegmentReference SegmentReference::of(const SegmentLocation& location) noexcept {
  SegmentReference reference;
  if (location.handle.size() > SegmentProvider::kMaxHandle) return reference;
  reference.offset = location.offset;
  reference.handle_bytes = static_cast<std::uint32_t>(location.handle.size());
  std::memcpy(reference.handle, location.handle.data(), location.handle.size());
  return reference;
}

SegmentLocation SegmentReference::location() const {
  return {std::string(handle, std::min<std::size_t>(handle_bytes, SegmentProvider::kMaxHandle)), offset};
}

void SharedMemoryRegistry::forget(const std::byte* base) {
  std::lock_guard lock(mutex_);
  own_.erase(base);
}

}  // namespace meshcomm::detail

namespace meshcomm {

SharedBuffer::SharedBuffer() noexcept = default;
SharedBuffer::SharedBuffer(std::shared_ptr<detail::SharedSegment> segment) noexcept : segment_(std::move(segment)) {}
SharedBuffer::SharedBuffer(SharedBuffer&&) noexcept = default;
SharedBuffer& SharedBuffer::operator=(SharedBuffer&&) noexcept = default;
SharedBuffer::~SharedBuffer() = default;
void* SharedBuffer::data() const noexcept { return segment_ ? segment_->base() : nullptr; }
std::size_t SharedBuffer::bytes() const noexcept { return segment_ ? segment_->bytes() : 0; }

}  // namespace meshcomm
