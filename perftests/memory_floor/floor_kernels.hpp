#pragma once

// The floors' reductions: the memory traffic a reduction must cause, with nothing else around it.

#include <cstddef>

namespace meshcomm::perf::memory_floor {

/// Sums the `blocks` blocks of `block` bytes (f32) at `source` into `to`: a reduce-scatter's
/// traffic, its input blocks read once and its output written once. `streaming`: a cached chunk
/// at a time, written out with streaming stores (meshcomm's reduce_streaming); otherwise plain
/// stores straight into `to`, as meshcomm's reduce_pair writes. `to` may be the first block.
void sum_blocks(std::byte* to, const std::byte* source, int blocks, std::size_t block, bool streaming);

/// Sums the `blocks` blocks of `block` bytes (f32) at `source` a cached chunk at a time and
/// writes each chunk's sums into every one of the `blocks` blocks at `outputs`: a one-pass
/// all-reduce's traffic for one rank's share, every input read once and every output written
/// once. `streaming`: with streaming stores; otherwise plain ones, which find lines just read
/// (in place) still cached. `outputs` may be `source` (each chunk is read before it is written).
void sum_into_every_block(std::byte* outputs, const std::byte* source, int blocks, std::size_t block,
                          bool streaming);

}  // namespace meshcomm::perf::memory_floor
