#pragma once

// The data movement of algorithms, on whichever memory their buffers live: host memory directly,
// CUDA memory through device copies and reduction kernels (complete when the call returns).

#include <cstddef>

#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// Copies `bytes` bytes from `from` to `to`, both in `memory`. A host copy streams
/// (streaming_copy.hpp) when `written_in_operation`, all that this rank writes in the operation
/// the copy belongs to, is too large to stay cached (0: the copy alone).
void copy_bytes(void* to, const void* from, std::size_t bytes, MemoryKind memory,
                std::size_t written_in_operation = 0);

/// Copies `bytes` bytes of `data` into `aside`, to be sent from there to a peer of this host that
/// reads them itself (a single copy): an exchange in place sends from a copy, so that the lines
/// its peer reads are not the ones this rank writes next. On the host, below
/// streaming_copy_threshold() (from it the copy streams, as any copy that size), with the stores
/// measured faster for memory a peer reads next (copy_into_peer_memory, PeerReadCopy::exchange_aside).
void copy_aside_to_send(void* aside, const void* data, std::size_t bytes, MemoryKind memory);

/// `destination[i] = destination[i] op source[i]` (see reduction.hpp) on `memory`.
void reduce_into(void* destination, const void* source, std::size_t count, DataType type, ReduceOp op,
                 MemoryKind memory);

/// `output[i] = first[i] op second[i]` on `memory`; `output` may alias either input.
void reduce_pair(void* output, const void* first, const void* second, std::size_t count, DataType type, ReduceOp op,
                 MemoryKind memory);

/// `data[i] /= divisor` on `memory`, the last step of an average.
void divide_for_average(void* data, std::size_t count, DataType type, int divisor, MemoryKind memory);

}  // namespace meshcomm::detail
