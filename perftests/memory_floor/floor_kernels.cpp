#include "memory_floor/floor_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "reduction.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::perf::memory_floor {
namespace {

constexpr auto kF32 = DataType::f32;
constexpr auto kSum = ReduceOp::sum;

}  // namespace

void sum_blocks(std::byte* to, const std::byte* source, int blocks, std::size_t block, bool streaming) {
  std::vector<const void*> inputs;
  for (int b = 0; b < blocks; ++b) inputs.push_back(source + static_cast<std::size_t>(b) * block);
  const std::size_t count = block / sizeof(float);
  if (streaming) {
    detail::reduce_streaming(to, inputs, count, kF32, kSum);
    return;
  }
  if (blocks == 1) {
    std::memmove(to, inputs[0], block);
    return;
  }
  detail::reduce_pair(to, inputs[0], inputs[1], count, kF32, kSum);
  for (std::size_t b = 2; b < inputs.size(); ++b) detail::reduce_into(to, inputs[b], count, kF32, kSum);
}

void sum_into_every_block(std::byte* outputs, const std::byte* source, int blocks, std::size_t block,
                          bool streaming) {
  constexpr std::size_t kChunkBytes = std::size_t{16} << 10;  // stays in a core's first-level cache
  alignas(64) std::byte chunk[kChunkBytes];
  for (std::size_t offset = 0; offset < block; offset += kChunkBytes) {
    const std::size_t bytes = std::min(kChunkBytes, block - offset);
    const std::size_t count = bytes / sizeof(float);
    const auto input = [&](int b) { return source + static_cast<std::size_t>(b) * block + offset; };
    if (blocks == 1) {
      std::memcpy(chunk, input(0), bytes);
    } else {
      detail::reduce_pair(chunk, input(0), input(1), count, kF32, kSum);
    }
    for (int b = 2; b < blocks; ++b) detail::reduce_into(chunk, input(b), count, kF32, kSum);
    for (int b = 0; b < blocks; ++b) {
      std::byte* to = outputs + static_cast<std::size_t>(b) * block + offset;
      if (streaming) {
        detail::streaming_copy(to, chunk, bytes);
      } else {
        std::memcpy(to, chunk, bytes);
      }
    }
  }
}

}  // namespace meshcomm::perf::memory_floor
