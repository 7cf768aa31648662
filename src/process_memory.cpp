#include "process_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>

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

}  // namespace

void allow_peers_to_read_this_process() noexcept { (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); }

std::uint64_t memory_probe_address() noexcept {
  return reinterpret_cast<std::uint64_t>(const_cast<const std::uint64_t*>(&probe_word));
}

bool can_read_process(std::int64_t pid, std::uint64_t probe_address) noexcept {
  std::uint64_t value = 0;
  return read_from_process(pid, probe_address, &value, sizeof value) == 0 && value == kProbeValue;
}

int read_from_process(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes) noexcept {
  return move_with_process(pid, address, static_cast<std::byte*>(into), bytes, process_vm_readv);
}

int write_to_process(std::int64_t pid, std::uint64_t address, const void* from, std::size_t bytes) noexcept {
  // process_vm_writev reads its local iovecs only; they are not const in its signature.
  return move_with_process(pid, address, static_cast<std::byte*>(const_cast<void*>(from)), bytes, process_vm_writev);
}

}  // namespace meshcomm::detail
