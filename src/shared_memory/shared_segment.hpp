#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace meshcomm::detail {

class SharedMemoryRegistry;

/// A POSIX shared-memory segment this process created: mapped here, openable by name from any
/// process on the node while it lives. Unlinked and unmapped when destroyed.
class SharedSegment {
 public:
  SharedSegment(std::string name, std::byte* base, std::size_t bytes, std::weak_ptr<SharedMemoryRegistry> registry)
      : name_(std::move(name)), base_(base), bytes_(bytes), registry_(std::move(registry)) {}
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::string name_;
  std::byte* base_;
  std::size_t bytes_;
  std::weak_ptr<SharedMemoryRegistry> registry_;
};

/// Where a range of memory sits inside some rank's shared segment.
struct SegmentLocation {
  std::string name;
  std::size_t offset = 0;
};

/// The shared segments of a family of communicators: the ones this process made (to find which
/// segment a pointer is in) and the peers' ones it has mapped (cached until it is destroyed).
class SharedMemoryRegistry : public std::enable_shared_from_this<SharedMemoryRegistry> {
 public:
  ~SharedMemoryRegistry();

  /// A new segment of at least `bytes` bytes. Throws Error(backend_failure) naming the call.
  std::shared_ptr<SharedSegment> create(std::size_t bytes);

  /// The segment and offset of [pointer, pointer + bytes), if a segment of ours holds it all.
  [[nodiscard]] std::optional<SegmentLocation> locate(const void* pointer, std::size_t bytes) const;

  /// The base address of a peer's segment in this process, mapping it on first use.
  std::byte* map_peer(const std::string& name);

  /// Called by a segment as it goes away.
  void forget(const std::byte* base);

 private:
  mutable std::mutex mutex_;
  std::map<const std::byte*, std::pair<std::string, std::size_t>> own_;  // base -> name, bytes
  std::map<std::string, std::pair<std::byte*, std::size_t>> peers_;       // name -> base, bytes
  std::uint64_t created_ = 0;
};

}  // namespace meshcomm::detail
