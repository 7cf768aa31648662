#include "process_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "plain_copy.hpp"

namespace meshcomm::detail {

namespace {

constexpr std::uint64_t kProbeValue = 0x6d657368636f7079;  // "meshcopy"
const volatile std::uint64_t probe_word = kProbeValue;

/// Moves `bytes` between `local` here and `address` in process `pid`, in as many kernel copies
/// as the kernel takes to move them all, with `move` (process_vm_readv or process_vm_writev); 0 or
/// the errno.
template <class Move>
int move_with_process(std::int64_t pid, std::uint64_t address, std::byte* local, std::size_t bytes,
                      Move move) noexcept {
  std::size_t done = 0;
  while (done < bytes) {
    iovec here{local + done, bytes - done};
    iovec there{reinterpret_cast<void*>(address + done), bytes - done};
    const auto moved = move(static_cast<pid_t>(pid), &here, 1, &there, 1, 0);
    if (moved <= 0) return moved == 0 ? EFAULT : errno;
    done += static_cast<std::size_t>(moved);
  }
  return 0;
}

/// The bytes a kernel copy out of step moves through the bounce buffer at a time.
constexpr std::size_t kBounceBytes = 256 * 1024;

/// Frees what std::aligned_alloc allocated.
struct FreeMemory {
  void operator()(std::byte* memory) const noexcept { std::free(memory); }
};

/// This thread's bounce buffer, page-aligned, with a page of slack to place a piece at any offset
/// within a page; null if it cannot be had.
std::byte* bounce_buffer() noexcept {
  thread_local std::unique_ptr<std::byte, FreeMemory> buffer(
      static_cast<std::byte*>(std::aligned_alloc(kCopyPageBytes, kBounceBytes + kCopyPageBytes)));
  return buffer.get();
}

/// The fastest of a few kernel copies of this process's own memory, `ahead` bytes out of step.
std::chrono::nanoseconds fastest_self_read(std::byte* source, std::byte* destination, std::size_t ahead) noexcept {
  constexpr std::size_t kProbeBytes = 64 * 1024;
  auto fastest = std::chrono::nanoseconds::max();
  for (int trial = 0; trial < 5; ++trial) {
    const auto began = std::chrono::steady_clock::now();
    if (move_with_process(getpid(), reinterpret_cast<std::uint64_t>(source), destination + ahead, kProbeBytes,
                          process_vm_readv) != 0) {
      return std::chrono::nanoseconds::zero();
    }
    fastest = std::min(fastest, std::chrono::steady_clock::now() - began);
  }
  return fastest;
}

/// Whether this machine's kernel copies run slower out of step (plain_copy.hpp): measured once
/// per process, on its first copy out of step, by reading 64 KiB of its own memory in step and
/// 16 bytes out of step, five times each (about 0.1-0.5 ms). Slower: the fastest copy out of step
/// took 1.5x the fastest in step or longer (3-6x on the AMD EPYC guest where it was found).
bool kernel_copies_out_of_step_are_slow() noexcept {
  static const bool slow = [] {
    const std::size_t bytes = 64 * 1024 + kCopyPageBytes;
    std::unique_ptr<std::byte, FreeMemory> source(static_cast<std::byte*>(std::aligned_alloc(kCopyPageBytes, bytes)));
    std::unique_ptr<std::byte, FreeMemory> destination(
        static_cast<std::byte*>(std::aligned_alloc(kCopyPageBytes, bytes)));
    if (!source || !destination) return false;
    std::memset(source.get(), 1, bytes);
    std::memset(destination.get(), 2, bytes);
    (void)fastest_self_read(source.get(), destination.get(), 0);  // warm both
    const auto in_step = fastest_self_read(source.get(), destination.get(), 0);
    const auto out_of_step = fastest_self_read(source.get(), destination.get(), 16);
    return in_step.count() > 0 && out_of_step.count() * 2 >= in_step.count() * 3;
  }();
  return slow;
}

/// Whether a kernel copy goes through the bounce buffer on `route` (`out_of_step_copy`: whether
/// its ends are out of step).
bool takes_bounce(OutOfStepRoute route, bool out_of_step_copy) noexcept {
  if (!out_of_step_copy) return false;
  switch (route) {
    case OutOfStepRoute::direct:
      return false;
    case OutOfStepRoute::through_bounce:
      return true;
    case OutOfStepRoute::measured:
      break;
  }
  return kernel_copies_out_of_step_are_slow();
}

/// This thread's bounce buffer at `address`'s offset within a page, where a kernel copy of `bytes`
/// to or from `address` takes one on `route` (`copy_out_of_step`: whether its ends are out of
/// step); else null.
std::byte* bounce_in_step_with(std::uint64_t address, std::size_t bytes, bool copy_out_of_step,
                               OutOfStepRoute route) noexcept {
  if (bytes < kOutOfStepCopyFrom || !takes_bounce(route, copy_out_of_step)) return nullptr;
  std::byte* bounce = bounce_buffer();
  return bounce == nullptr ? nullptr : bounce + address % kCopyPageBytes;
}

}  // namespace

void allow_peers_to_read_this_process() noexcept { (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); }

std::uint64_t memory_probe_address() noexcept {
  return reinterpret_cast<std::uint64_t>(const_cast<const std::uint64_t*>(&probe_word));
}

bool can_read_process(std::int64_t pid, std::uint64_t probe_address) noexcept {
  std::uint64_t value = 0;
  return read_from_process(pid, probe_address, &value, sizeof value) == 0 && value == kProbeValue;
}

int read_from_process(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes,
                      OutOfStepRoute route) noexcept {
  auto* local = static_cast<std::byte*>(into);
  std::byte* bounce =
      bounce_in_step_with(address, bytes, out_of_step(reinterpret_cast<std::uintptr_t>(local), address), route);
  if (bounce == nullptr) return move_with_process(pid, address, local, bytes, process_vm_readv);
  // The kernel copies into the bounce buffer in step, plain_copy() from it out of step.
  for (std::size_t done = 0; done < bytes; done += kBounceBytes) {
    const std::size_t piece = std::min(kBounceBytes, bytes - done);
    if (const int error = move_with_process(pid, address + done, bounce, piece, process_vm_readv); error != 0) {
      return error;
    }
    plain_copy(local + done, bounce, piece);
  }
  return 0;
}

int write_to_process(std::int64_t pid, std::uint64_t address, const void* from, std::size_t bytes,
                     OutOfStepRoute route) noexcept {
  // process_vm_writev reads its local iovecs only; they are not const in its signature.
  auto* local = static_cast<std::byte*>(const_cast<void*>(from));
  std::byte* bounce =
      bounce_in_step_with(address, bytes, out_of_step(address, reinterpret_cast<std::uintptr_t>(local)), route);
  if (bounce == nullptr) return move_with_process(pid, address, local, bytes, process_vm_writev);
  for (std::size_t done = 0; done < bytes; done += kBounceBytes) {
    const std::size_t piece = std::min(kBounceBytes, bytes - done);
    plain_copy(bounce, local + done, piece);
    if (const int error = move_with_process(pid, address + done, bounce, piece, process_vm_writev); error != 0) {
      return error;
    }
  }
  return 0;
}

}  // namespace meshcomm::detail
