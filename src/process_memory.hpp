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

/// Reads `bytes` at `address` in process `pid` into `into`; 0 or the errno.
int read_from_process(std::int64_t pid, std::uint64_t address, void* into, std::size_t bytes) noexcept;

/// Writes `bytes` from `from` to `address` in process `pid`; 0 or the errno.
int write_to_process(std::int64_t pid, std::uint64_t address, const void* from, std::size_t bytes) noexcept;

}  // namespace meshcomm::detail
