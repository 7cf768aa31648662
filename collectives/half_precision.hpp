#pragma once

#include <bit>
#include <cstdint>

namespace meshcomm::detail {

/// bfloat16 bits to f32 (exact).
inline float bf16_to_f32(std::uint16_t bits) noexcept { return std::bit_cast<float>(std::uint32_t{bits} << 16); }

/// f32 to bfloat16 bits, rounding to nearest even; NaN stays NaN.
inline std::uint16_t f32_to_bf16(float value) noexcept {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x40U);
  bits += 0x7fffU + ((bits >> 16) & 1U);
  return static_cast<std::uint16_t>(bits >> 16);
}

/// IEEE binary16 bits to f32 (exact, subnormals included).
inline float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000U} << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fU;
  std::uint32_t mantissa = bits & 0x3ffU;
  if (exponent == 0x1fU) return std::bit_cast<float>(sign | 0x7f800000U | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // Subnormal: normalise it.
    exponent = 127 - 15 + 1;
    while ((mantissa & 0x400U) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ffU;
    return std::bit_cast<float>(sign | (exponent << 23) | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

/// f32 to IEEE binary16 bits, rounding to nearest even; overflow gives infinity.
inline std::uint16_t f32_to_f16(float value) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
  const std::uint32_t magnitude = bits & 0x7fffffffU;
  if (magnitude > 0x7f800000U) return static_cast<std::uint16_t>(sign | 0x7e00U);  // NaN
  if (magnitude >= 0x477ff000U) return static_cast<std::uint16_t>(sign | 0x7c00U);  // rounds to infinity
  if (magnitude < 0x38800000U) {
    // Subnormal or zero in f16: scale the value by 2^24 and round once.
    if (magnitude < 0x33000000U) return sign;
    const std::uint32_t mantissa = (magnitude & 0x7fffffU) | 0x800000U;
    const int shift = 126 - static_cast<int>(magnitude >> 23);  // 14..24
    const std::uint32_t halfway = 1U << (shift - 1);
    const std::uint32_t remainder = mantissa & ((1U << shift) - 1);
    std::uint32_t result = mantissa >> shift;
    if (remainder > halfway || (remainder == halfway && (result & 1U))) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  std::uint32_t result = ((magnitude >> 23) - 127 + 15) << 10 | ((magnitude >> 13) & 0x3ffU);
  const std::uint32_t remainder = magnitude & 0x1fffU;
  if (remainder > 0x1000U || (remainder == 0x1000U && (result & 1U))) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

}  // namespace meshcomm::detail
