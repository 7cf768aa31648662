#pragma once

// Exactly predictable data for collectives: small integers that every dtype (f16 and bf16
// included) holds exactly, chosen so that sums, products and averages never overflow. Tests and
// perftests fill buffers with these and count the elements that differ.

#include <cstddef>

#include "meshcomm/types.hpp"

namespace meshcomm::verifiable {

/// Stores an integral `value` as `type` (negative values wrap in unsigned types).
void encode(double value, DataType type, void* out);
/// Reads element `index` of a buffer of `type`.
double decode(const void* data, std::size_t index, DataType type);
/// `value` after a round trip through `type`.
double as_stored(double value, DataType type);

/// What `rank` of `size` contributes at element `index` of a reduction with `op`.
double contribution(ReduceOp op, int rank, std::size_t index, int size);
/// The exact result of reducing every rank's contribution at `index`.
double reduced(ReduceOp op, std::size_t index, int size);
/// What `from` sends to `to` at position `index` in collectives that do not reduce.
double payload(int from, int to, std::size_t index);

/// Fills `count` elements of `type` at element `first` of `data` with `value(i)`.
template <class F>
void fill(void* data, std::size_t first, std::size_t count, DataType type, F value) {
  auto* bytes = static_cast<std::byte*>(data);
  for (std::size_t i = 0; i < count; ++i) encode(value(i), type, bytes + (first + i) * size_of(type));
}

/// Fills `count` elements with what `rank` of `size` contributes to a reduction with `op`.
inline void fill_contributions(void* data, std::size_t count, DataType type, ReduceOp op, int rank, int size) {
  fill(data, 0, count, type, [&](std::size_t i) { return contribution(op, rank, i, size); });
}

/// Fills `count` elements at element `first` with what `from` sends to `to`.
inline void fill_payload(void* data, std::size_t first, std::size_t count, DataType type, int from, int to) {
  fill(data, first, count, type, [&](std::size_t i) { return payload(from, to, i); });
}

/// Number of the `count` elements at element `first` of `data` that differ from `expected(i)`.
template <class F>
std::size_t count_wrong(const void* data, std::size_t first, std::size_t count, DataType type, F expected) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (decode(data, first + i, type) != as_stored(expected(i), type)) ++wrong;
  }
  return wrong;
}

}  // namespace meshcomm::verifiable
