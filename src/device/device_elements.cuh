#pragma once

// How each meshcomm DataType is loaded, computed on and stored in device code: f16 and bf16 in
// f32, everything else as itself. Shared by the reduction and row kernels.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "meshcomm/types.hpp"

namespace meshcomm::detail::device {

template <class T>
struct Plain {
  using Compute = T;
  __device__ static T load(T value) { return value; }
  __device__ static T store(T value) { return value; }
};
struct F16 {
  using Compute = float;
  __device__ static float load(std::uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
  __device__ static std::uint16_t store(float value) { return __half_as_ushort(__float2half_rn(value)); }
};
struct Bf16 {
  using Compute = float;
  __device__ static float load(std::uint16_t bits) { return __bfloat162float(__ushort_as_bfloat16(bits)); }
  __device__ static std::uint16_t store(float value) { return __bfloat16_as_ushort(__float2bfloat16_rn(value)); }
};

/// Launches `launch` for the storage and codec of `type`.
template <class Launch>
void by_type(DataType type, Launch&& launch) {
  switch (type) {
    case DataType::f32: return launch.template operator()<float, Plain<float>>();
    case DataType::f64: return launch.template operator()<double, Plain<double>>();
    case DataType::f16: return launch.template operator()<std::uint16_t, F16>();
    case DataType::bf16: return launch.template operator()<std::uint16_t, Bf16>();
    case DataType::i8: return launch.template operator()<std::int8_t, Plain<std::int8_t>>();
    case DataType::u8: return launch.template operator()<std::uint8_t, Plain<std::uint8_t>>();
    case DataType::i32: return launch.template operator()<std::int32_t, Plain<std::int32_t>>();
    case DataType::u32: return launch.template operator()<std::uint32_t, Plain<std::uint32_t>>();
    case DataType::i64: return launch.template operator()<std::int64_t, Plain<std::int64_t>>();
    case DataType::u64: return launch.template operator()<std::uint64_t, Plain<std::uint64_t>>();
  }
}

}  // namespace meshcomm::detail::device
