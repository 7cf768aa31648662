#include "shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

namespace {

Error system_error(const std::string& call, const std::string& name) {
  return Error(ErrorCode::backend_failure,
               fmt::format("{} for shared memory segment {} failed: {}; check that /dev/shm is mounted and has room",
                           call, name, std::strerror(errno)),
               {.operation = "allocate_shared", .native_code = errno});
}

}  // namespace

SharedSegment::~SharedSegment() {
  if (auto registry = registry_.lock()) registry->forget(base_);
  munmap(base_, bytes_);
  shm_unlink(name_.c_str());
}

SharedMemoryRegistry::~SharedMemoryRegistry() {
  for (auto& [name, mapping] : peers_) munmap(mapping.first, mapping.second);
}

std::shared_ptr<SharedSegment> SharedMemoryRegistry::create(std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t size = std::max(page, (bytes + page - 1) / page * page);
  std::string name;
  {
    std::lock_guard lock(mutex_);
    name = fmt::format("/meshcomm-{}-{}-{}", getpid(), reinterpret_cast<std::uintptr_t>(this) & 0xffffff, created_++);
  }
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw system_error("shm_open", name);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const auto error = system_error("ftruncate", name);
    close(fd);
    shm_unlink(name.c_str());
    throw error;
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    const auto error = system_error("mmap", name);
    shm_unlink(name.c_str());
    throw error;
  }
  auto* bytes_base = static_cast<std::byte*>(base);
  {
    std::lock_guard lock(mutex_);
    own_[bytes_base] = {name, size};
  }
  return std::make_shared<SharedSegment>(name, bytes_base, size, weak_from_this());
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

std::byte* SharedMemoryRegistry::map_peer(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto found = peers_.find(name); found != peers_.end()) return found->second.first;
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) throw system_error("shm_open", name);
  struct stat info {};
  fstat(fd, &info);
  const auto size = static_cast<std::size_t>(info.st_size);
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) throw system_error("mmap", name);
  peers_[name] = {static_cast<std::byte*>(base), size};
  return static_cast<std::byte*>(base);
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
