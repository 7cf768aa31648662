#pragma once

#include <cstddef>
#include <vector>

namespace meshcomm::testing {

/// Bytes for a test's buffer that go back, when it is destroyed, to the next buffer its thread
/// makes. Memory the process has not touched costs a page fault a page (about 11 µs on the 2-core
/// CI guest): that was most of the time of the collective matrices' large cases at 16 thread
/// ranks, each of whose buffers was fresh memory. Every byte reads `kUnwritten` when taken, so a
/// result the call under test never wrote cannot read as a value an earlier case left.
/// Under AddressSanitizer every buffer is fresh memory, so that a write into a buffer after its
/// case ended is caught there.
class ReusedBytes {
 public:
  static constexpr std::byte kUnwritten{0xA5};

  explicit ReusedBytes(std::size_t size);
  ~ReusedBytes();
  ReusedBytes(ReusedBytes&& other) noexcept = default;
  ReusedBytes& operator=(ReusedBytes&& other) noexcept = default;
  ReusedBytes(const ReusedBytes&) = delete;
  ReusedBytes& operator=(const ReusedBytes&) = delete;

  /// The first byte.
  [[nodiscard]] std::byte* data() noexcept { return bytes_.data(); }
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace meshcomm::testing
