#pragma once

// CUDA memory as the rest of meshcomm sees it: copies, reductions and scratch on the device,
// without CUDA headers. In a build without CUDA every function throws Error(unsupported).

#include <cstddef>
#include <cstdint>
#include <string>

#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::detail::device {

/// True if this build has CUDA support and a CUDA device is visible to the process.
[[nodiscard]] bool visible();

/// True if this build has CUDA support (compiled with MESHCOMM_WITH_CUDA).
[[nodiscard]] bool built() noexcept;

/// Why `pointer` cannot be used as CUDA memory (no device visible, or it is host memory), or
/// empty if it can.
[[nodiscard]] std::string pointer_problem(const void* pointer);

/// Copies `bytes` bytes in any direction (host or device on either side) on `stream` (none: the
/// calling thread's own stream) and returns once the copy is complete.
void copy(void* to, const void* from, std::size_t bytes, StreamRef stream = {});

/// `destination[i] = destination[i] op source[i]` on device memory, as `reduce_into` does on
/// the host (f16 and bf16 computed in f32, integers wrap); complete on return.
void reduce_into(void* destination, const void* source, std::size_t count, DataType type, ReduceOp op,
                 StreamRef stream = {});

/// `output[i] = first[i] op second[i]` on device memory; `output` may alias either input.
void reduce_pair(void* output, const void* first, const void* second, std::size_t count, DataType type, ReduceOp op,
                 StreamRef stream = {});

/// `data[i] /= divisor` on device memory (integer division for integer types).
void divide_for_average(void* data, std::size_t count, DataType type, int divisor, StreamRef stream = {});

/// When a device call's work is done: before it returns, or later, in `stream` order.
enum class Completion : std::uint8_t { on_return, queued };

/// One row move: row `to` of a destination from row `from` of a source.
struct RowPair {
  std::uint64_t to;
  std::uint64_t from;
};

/// For each of `count` pairs (a device array), copies `row_bytes` bytes from row `from` of
/// `source` (rows `source_stride` bytes apart) to row `to` of `destination`: halo packing and
/// unpacking of strided rows. Complete on return unless `completion` is queued.
void copy_rows(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
               const RowPair* pairs, std::size_t count, std::size_t row_bytes, StreamRef stream = {},
               Completion completion = Completion::on_return);

/// As `copy_rows`, but adds (`row_elements` elements of `type`) onto the destination rows: the
/// adjoint of a halo exchange. Pairs must not repeat a destination row.
void add_rows(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
              const RowPair* pairs, std::size_t count, std::size_t row_elements, DataType type,
              StreamRef stream = {}, Completion completion = Completion::on_return);

/// Queues a copy of `bytes` device bytes on `stream` as a kernel of `blocks` CTAs (it returns at
/// once): a transfer that takes only a few SMs from the work beside it.
void copy_on_stream(void* to, const void* from, std::size_t bytes, int blocks, StreamRef stream);

/// Queues a copy of `rows` rows of `row_bytes` bytes, `from_pitch` bytes apart in `from` and
/// `to_pitch` bytes apart in `to` (device or host on either side), on `stream` (none: the legacy
/// default stream); returns at once.
void copy_2d(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t row_bytes,
             std::size_t rows, StreamRef stream);

/// Blocks until the work queued on `stream` so far is complete (none: the legacy default stream).
void synchronize(StreamRef stream);

/// `bytes` of device memory on the current device; release with `release`.
[[nodiscard]] void* allocate(std::size_t bytes);
/// Frees memory from `allocate`; never throws.
void release(void* pointer) noexcept;

}  // namespace meshcomm::detail::device
