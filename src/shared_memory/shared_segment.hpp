#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace meshcomm::detail {

class SharedMemoryRegistry;

/// Memory for SharedSegments and how a peer on the node maps it: POSIX shared memory by name,
/// or, on the ucx backend, memory UCX allocated and a remote key (peers can put into it too).
class SegmentProvider {
 public:
  /// Memory a provider made: where it is, and the handle a peer maps it by.
  struct Allocation {
    std::byte* base = nullptr;
    std::size_t bytes = 0;
    std::string handle;             ///< opaque bytes, at most kMaxHandle of them
    std::function<void()> release;  ///< frees the memory
    /// Makes the handle unusable for new peers while the memory stays mapped where it is (POSIX:
    /// unlinks the name, so that nothing is left behind if the process dies); empty where a
    /// handle leaves nothing behind.
    std::function<void()> unpublish;
  };
  /// The largest handle a peer is sent (descriptors and halo credits hold this many bytes).
  static constexpr std::size_t kMaxHandle = 256;

  virtual ~SegmentProvider() = default;
  /// New memory of at least `bytes` bytes (whole pages). Throws Error(backend_failure) naming the call.
  virtual Allocation allocate(std::size_t bytes) = 0;
  /// A peer's memory in this process from its handle, mapped on first use and kept until the
  /// provider goes.
  virtual std::byte* attach(const std::string& handle) = 0;
};

/// This host's identity (a hash of its name): ranks with equal values can map each other's
/// segments.
std::uint64_t host_identity();

/// POSIX shared-memory segments (shm_open), named after the process: any backend.
std::shared_ptr<SegmentProvider> make_posix_segments();

/// Memory made by Communicator::allocate_shared, which the other ranks on the node can map.
/// Freed (and forgotten by its registry) when destroyed.
class SharedSegment {
 public:
  SharedSegment(SegmentProvider::Allocation allocation, std::weak_ptr<SharedMemoryRegistry> registry)
      : allocation_(std::move(allocation)), registry_(std::move(registry)) {}
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  [[nodiscard]] const std::string& handle() const noexcept { return allocation_.handle; }
  [[nodiscard]] std::byte* base() const noexcept { return allocation_.base; }
  [[nodiscard]] std::size_t bytes() const noexcept { return allocation_.bytes; }
  /// Once every peer that needs it has mapped it: no new peer can, and a process that dies
  /// leaves nothing behind (Allocation::unpublish).
  void unpublish() const {
    if (allocation_.unpublish) allocation_.unpublish();
  }

 private:
  SegmentProvider::Allocation allocation_;
  std::weak_ptr<SharedMemoryRegistry> registry_;
};

/// Where a range of memory sits inside some rank's shared segment.
struct SegmentLocation {
  std::string handle;
  std::size_t offset = 0;
};

/// A SegmentLocation as fixed-size plain data, for messages to peers (which receive exactly
/// this many bytes). An empty reference (no handle) names no segment.
struct SegmentReference {
  std::uint64_t offset = 0;
  std::uint32_t handle_bytes = 0;
  std::uint32_t padding = 0;
  char handle[SegmentProvider::kMaxHandle] = {};

  /// `location`; empty where its handle is longer than kMaxHandle.
  static SegmentReference of(const SegmentLocation& location) noexcept;
  [[nodiscard]] bool empty() const noexcept { return handle_bytes == 0; }
  /// The location it names (a length beyond kMaxHandle, from a corrupt message, is clipped).
  [[nodiscard]] SegmentLocation location() const;
};

/// The shared segments of a family of communicators: the ones this process made (to find which
/// segment a pointer is in) and the peers' ones it has mapped (through the provider).
class SharedMemoryRegistry : public std::enable_shared_from_this<SharedMemoryRegistry> {
 public:
  explicit SharedMemoryRegistry(std::shared_ptr<SegmentProvider> provider) : provider_(std::move(provider)) {}

  /// A new segment of at least `bytes` bytes. Throws Error(backend_failure) naming the call.
  std::shared_ptr<SharedSegment> create(std::size_t bytes);

  /// The segment and offset of [pointer, pointer + bytes), if a segment of ours holds it all.
  [[nodiscard]] std::optional<SegmentLocation> locate(const void* pointer, std::size_t bytes) const;

  /// The base address of a peer's segment in this process, mapping it on first use.
  std::byte* map_peer(const std::string& handle) { return provider_->attach(handle); }

  /// Called by a segment as it goes away.
  void forget(const std::byte* base);

 private:
  std::shared_ptr<SegmentProvider> provider_;
  mutable std::mutex mutex_;
  std::map<const std::byte*, std::pair<std::string, std::size_t>> own_;  // base -> handle, bytes
};

}  // namespace meshcomm::detail
