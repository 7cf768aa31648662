#pragma once

// What --new-input writes over a sender's input before each call: bytes no recent call sent.

#include <cstddef>
#include <cstdint>

namespace meshcomm::perf {

/// The size of the blocks whose first word write_new_input() makes differ.
inline constexpr std::size_t kNewInputBlock = 4096;

/// Writes new bytes over all `bytes` at `data` for call `call`: every byte 1 + call % 120, as fast
/// as memset, and the first 16-bit word of every 4 KiB block 0x3C00 plus ten bits that differ
/// from block to block (for 1024 blocks) and from call to call (for 1024 calls), so that no 4 KiB
/// block starts as one before it in the call or as itself in the calls before (a broadcast root
/// leaves out of its stores the leading blocks its slot already holds). As f32, f64 and bf16 such
/// elements are normal, finite numbers.
void write_new_input(void* data, std::size_t bytes, std::uint32_t call);

}  // namespace meshcomm::perf
