#include "verifiable.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "half_precision.hpp"

namespace meshcomm::verifiable {

void encode(double value, DataType type, void* out) {
  const auto whole = static_cast<std::int64_t>(value);
  switch (type) {
    case DataType::f32: *static_cast<float*>(out) = static_cast<float>(value); break;
    case DataType::f64: *static_cast<double*>(out) = value; break;
    case DataType::f16: *static_cast<std::uint16_t*>(out) = detail::f32_to_f16(static_cast<float>(value)); break;
    case DataType::bf16: *static_cast<std::uint16_t*>(out) = detail::f32_to_bf16(static_cast<float>(value)); break;
    case DataType::i8: *static_cast<std::int8_t*>(out) = static_cast<std::int8_t>(whole); break;
    case DataType::u8: *static_cast<std::uint8_t*>(out) = static_cast<std::uint8_t>(whole); break;
    case DataType::i32: *static_cast<std::int32_t*>(out) = static_cast<std::int32_t>(whole); break;
    case DataType::u32: *static_cast<std::uint32_t*>(out) = static_cast<std::uint32_t>(whole); break;
    case DataType::i64: *static_cast<std::int64_t*>(out) = whole; break;
    case DataType::u64: *static_cast<std::uint64_t*>(out) = static_cast<std::uint64_t>(whole); break;
  }
}

double decode(const void* data, std::size_t index, DataType type) {
  switch (type) {
    case DataType::f32: return static_cast<const float*>(data)[index];
    case DataType::f64: return static_cast<const double*>(data)[index];
    case DataType::f16: return detail::f16_to_f32(static_cast<const std::uint16_t*>(data)[index]);
    case DataType::bf16: return detail::bf16_to_f32(static_cast<const std::uint16_t*>(data)[index]);
    case DataType::i8: return static_cast<const std::int8_t*>(data)[index];
    case DataType::u8: return static_cast<const std::uint8_t*>(data)[index];
    case DataType::i32: return static_cast<const std::int32_t*>(data)[index];
    case DataType::u32: return static_cast<const std::uint32_t*>(data)[index];
    case DataType::i64: return static_cast<double>(static_cast<const std::int64_t*>(data)[index]);
    case DataType::u64: return static_cast<double>(static_cast<const std::uint64_t*>(data)[index]);
  }
  return NAN;
}

double as_stored(double value, DataType type) {
  std::byte slot[8];
  encode(value, type, slot);
  return decode(slot, 0, type);
}

double contribution(ReduceOp op, int rank, std::size_t index, int size) {
  const auto i = static_cast<int>(index % 1'000'003);
  switch (op) {
    case ReduceOp::sum: return (rank + i) % 3;
    case ReduceOp::prod: return i % size == rank ? 2 : 1;
    case ReduceOp::min:
    case ReduceOp::max: return (rank * 5 + i * 3) % 17;
    case ReduceOp::avg: return i % size == rank ? size * (1 + i % 3) : 0;
  }
  return 0;
}

double reduced(ReduceOp op, std::size_t index, int size) {
  if (op == ReduceOp::avg) return static_cast<double>(1 + index % 1'000'003 % 3);
  double result = contribution(op, 0, index, size);
  for (int rank = 1; rank < size; ++rank) {
    const double value = contribution(op, rank, index, size);
    switch (op) {
      case ReduceOp::sum: result += value; break;
      case ReduceOp::prod: result *= value; break;
      case ReduceOp::min: result = std::min(result, value); break;
      case ReduceOp::max: result = std::max(result, value); break;
      case ReduceOp::avg: break;
    }
  }
  return result;
}

double payload(int from, int to, std::size_t index) {
  return static_cast<double>((from * 7 + to * 3 + static_cast<int>(index % 1'000'003)) % 97);
}

}  // namespace meshcomm::verifiable
