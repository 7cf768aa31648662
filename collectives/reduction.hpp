#pragma once

#include <cstddef>
#include <span>

#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// `destination[i] = destination[i] op source[i]` for `count` elements of `type`. For `avg` it
/// sums (divide later with `divide_for_average`). f16 and bf16 are computed in f32 and rounded
/// once per element; integers wrap.
void reduce_into(void* destination, const void* source, std::size_t count, DataType type, ReduceOp op);

/// `output[i] = first[i] op second[i]`; `output` may alias either input.
void reduce_pair(void* output, const void* first, const void* second, std::size_t count, DataType type, ReduceOp op);

/// `output[i] = inputs[0][i] op inputs[1][i] op ...` over the `inputs` arrays (at least one) of
/// `count` elements, for an output too large to stay in the cache: summed a cached chunk at a
/// time and written out with streaming stores (streaming_copy.hpp), where reduce_pair's plain
/// stores would first read every output line. `output` may be `inputs[0]` itself (each chunk is
/// read before it is written over) but must not overlap any other input.
void reduce_streaming(void* output, std::span<const void* const> inputs, std::size_t count, DataType type,
                      ReduceOp op);

/// `data[i] /= divisor`, the last step of an average (integer division for integer types).
void divide_for_average(void* data, std::size_t count, DataType type, int divisor);

}  // namespace meshcomm::detail
