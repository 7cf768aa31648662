#include "memory_ops.hpp"

#include <algorithm>

#include "device/device_runtime.hpp"
#include "reduction.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::detail {

void copy_bytes(void* to, const void* from, std::size_t bytes, MemoryKind memory, std::size_t written_in_operation) {
  if (bytes == 0) return;
  if (memory == MemoryKind::cuda) return device::copy(to, from, bytes);
  copy_host_bytes(to, from, bytes, std::max(bytes, written_in_operation));
}

void reduce_into(void* destination, const void* source, std::size_t count, DataType type, ReduceOp op,
                 MemoryKind memory) {
  if (memory == MemoryKind::cuda) return device::reduce_into(destination, source, count, type, op);
  reduce_into(destination, source, count, type, op);
}

void reduce_pair(void* output, const void* first, const void* second, std::size_t count, DataType type, ReduceOp op,
                 MemoryKind memory) {
  if (memory == MemoryKind::cuda) return device::reduce_pair(output, first, second, count, type, op);
  reduce_pair(output, first, second, count, type, op);
}

void divide_for_average(void* data, std::size_t count, DataType type, int divisor, MemoryKind memory) {
  if (memory == MemoryKind::cuda) return device::divide_for_average(data, count, type, divisor);
  divide_for_average(data, count, type, divisor);
}

}  // namespace meshcomm::detail
