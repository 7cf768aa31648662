#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "meshcomm/export.hpp"

namespace meshcomm {

/// Element type of a buffer.
enum class DataType : std::uint8_t { f32, f64, f16, bf16, i8, u8, i32, u32, i64, u64 };

/// Element-wise reduction applied by reducing collectives.
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };

/// Where a buffer lives. `cuda` buffers are ordered on a stream (see stream.hpp).
enum class MemoryKind : std::uint8_t { host, cuda };

/// Names used in messages, options and output: "f32", "sum", "host", ...
MESHCOMM_API std::string_view to_string(DataType type) noexcept;
MESHCOMM_API std::string_view to_string(ReduceOp op) noexcept;
MESHCOMM_API std::string_view to_string(MemoryKind kind) noexcept;

/// Bytes of one element of `type`. Inline: every buffer's size is asked on every call.
constexpr std::size_t size_of(DataType type) noexcept {
  switch (type) {
    case DataType::i8:
    case DataType::u8: return 1;
    case DataType::f16:
    case DataType::bf16: return 2;
    case DataType::f32:
    case DataType::i32:
    case DataType::u32: return 4;
    case DataType::f64:
    case DataType::i64:
    case DataType::u64: return 8;
  }
  return 0;
}

/// IEEE 754 binary16, stored as its bit pattern (arithmetic happens in f32).
struct float16 {
  std::uint16_t bits;
};

/// bfloat16 (the top half of an f32), stored as its bit pattern (arithmetic happens in f32).
struct bfloat16 {
  std::uint16_t bits;
};

namespace detail {
template <class T>
struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::f32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::f64; };
template <> struct DataTypeOf<float16> { static constexpr DataType value = DataType::f16; };
template <> struct DataTypeOf<bfloat16> { static constexpr DataType value = DataType::bf16; };
template <> struct DataTypeOf<std::int8_t> { static constexpr DataType value = DataType::i8; };
template <> struct DataTypeOf<std::uint8_t> { static constexpr DataType value = DataType::u8; };
template <> struct DataTypeOf<std::byte> { static constexpr DataType value = DataType::u8; };
template <> struct DataTypeOf<std::int32_t> { static constexpr DataType value = DataType::i32; };
template <> struct DataTypeOf<std::uint32_t> { static constexpr DataType value = DataType::u32; };
template <> struct DataTypeOf<std::int64_t> { static constexpr DataType value = DataType::i64; };
template <> struct DataTypeOf<std::uint64_t> { static constexpr DataType value = DataType::u64; };
}  // namespace detail

/// The `DataType` of a C++ element type, e.g. `data_type_of<float> == DataType::f32`.
template <class T>
inline constexpr DataType data_type_of = detail::DataTypeOf<std::remove_cv_t<T>>::value;

}  // namespace meshcomm
