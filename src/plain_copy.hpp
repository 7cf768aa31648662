#pragma once

// Copies whose two ends are out of step within a page. glibc's memcpy moves 4 KiB to about 512
// KiB with `rep movsb`, as the kernel's copies between processes (process_vm_readv) move
// everything; on an AMD EPYC (Zen 3) guest memcpy ran 18-28x slower and the kernel's copies 3-6x
// where the destination lay 1-31 bytes past the source's offset within a page, and both at full
// speed from 32 bytes on (perftests/README.md, "Copies a few bytes out of step"; copy_step_perf
// measures any machine). A destination that far out of step is what an odd count makes of a
// block's place in a buffer, and a bounce buffer that malloc placed 16 bytes past a page.

#include <cstddef>
#include <cstdint>

namespace meshcomm::detail {

/// The page size within which a copy's two ends are compared.
inline constexpr std::size_t kCopyPageBytes = 4096;
/// The copies out of step that plain_copy() moves with vector moves: from this size, where glibc
/// takes `rep movsb`.
inline constexpr std::size_t kOutOfStepCopyFrom = 4096;

/// Whether a copy to `to` from `from` is out of step: its destination lies 1-63 bytes past its
/// source's offset within a page (the slow range, with a margin).
[[nodiscard]] inline bool out_of_step(std::uintptr_t to, std::uintptr_t from) noexcept {
  const std::uintptr_t ahead = (to - from) % kCopyPageBytes;
  return ahead > 0 && ahead < 64;
}
[[nodiscard]] inline bool out_of_step(const void* to, const void* from) noexcept {
  return out_of_step(reinterpret_cast<std::uintptr_t>(to), reinterpret_cast<std::uintptr_t>(from));
}

/// Copies `bytes` from `from` to `to` (not overlapping), as memcpy does, but a copy out of step
/// (out_of_step()) of kOutOfStepCopyFrom or more with 16-byte vector moves on x86-64, which run
/// at the same speed at any offset (22-28 GB/s on that guest, where memcpy in step ran 25-45).
void plain_copy(void* to, const void* from, std::size_t bytes) noexcept;

}  // namespace meshcomm::detail
