#pragma once

// Reading and writing another process's memory in one kernel copy (cross-memory attach,
// process_vm_readv and process_vm_writev), as Open MPI's shared-memory transport reads: for the
// peers of one host that run as one user. A rank first reads its peers' probe words to learn
// whether the kernel lets it; the kernel lets a process write where it lets it read.

#include <cstddef>
#include <cstdint>

namespace meshcomm::detail {

/// Lets every process of this user read this process's memory: Yama's ptrace_scope 1 otherwise
/// allows it to descendants only. Idempotent.
void allow_peers_to_read_this_process() noexcept;

/// The address, in this process, of a word with a known value, for peers to read once
/// (can_read_process).
[[nodiscard]] std::uint64_t memory_probe_address() noexcept;

/// Whether this process may read process `pid`'s memory: reads the word at `probe_address` there
/// (that process's memory_probe_address()) and checks its value.
[[nodiscard]] bool can_read_process(std::int64_t pid, std::uint64_t probe_address) noexcept;

/// How a kernel copy out of step (plain_copy.hpp) of kOutOfStepCopyFrom or more moves.
enum class OutOfStepRoute : std::uint8_t {
  measured,        ///< through a bounce buffer where this machine's kernel copies run slower so
  direct,          ///< one kernel copy, as any other
  through_bounce,  ///< a kernel copy in step with a bounce buffer, and plain_copy() on this side
};

/// Reads `bytes` at `address` in process `pid` into `into`; 0 or the errno. Out of step (`into`
/// 1-63 bytes past `address`'s offset within a page), as `route` says: on a machine whose kernel
/// copies run slower so, `measured` reads through a bounce buffer in step with `address`.
int read_from_process(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes,
                      OutOfStepRoute route = OutOfStepRoute::measured) noexcept;

/// Writes `bytes` from `from` to `address` in process `pid`; 0 or the errno. Out of step
/// (`address` 1-63 bytes past `from`'s offset within a page), as `route` says, as
/// read_from_process().
int write_to_process(std::int64_t pid, std::uint64_t address, const void* from, std::size_t bytes,
                     OutOfStepRoute route = OutOfStepRoute::measured) noexcept;

}  // namespace meshcomm::detail
