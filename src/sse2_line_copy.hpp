#pragma once

// Whole 64-byte lines copied with SSE2 loads and stores (every x86-64 has them), plain or
// streaming: the loop under plain_copy()'s copies out of step and streaming_copy()'s SSE2 stores.

#if defined(__x86_64__)

#include <emmintrin.h>

#include <cstddef>

namespace meshcomm::detail {

/// The stores copy_lines_sse2() makes.
enum class LineStores : unsigned char {
  plain,      ///< _mm_storeu_si128, any destination
  streaming,  ///< _mm_stream_si128, non-temporal: the destination must be 16-byte aligned
};

/// Copies the whole 64-byte lines of `bytes` from `source` to `destination` (not overlapping), four
/// 16-byte loads then four stores a line; returns the bytes copied (`bytes` rounded down to a line).
template <LineStores kStores>
inline std::size_t copy_lines_sse2(std::byte* destination, const std::byte* source, std::size_t bytes) noexcept {
  constexpr std::size_t kLine = 64;
  std::size_t done = 0;
  for (; done + kLine <= bytes; done += kLine) {
    const auto* in = reinterpret_cast<const __m128i*>(source + done);
    auto* out = reinterpret_cast<__m128i*>(destination + done);
    const __m128i first = _mm_loadu_si128(in);
    const __m128i second = _mm_loadu_si128(in + 1);
    const __m128i third = _mm_loadu_si128(in + 2);
    const __m128i fourth = _mm_loadu_si128(in + 3);
    if constexpr (kStores == LineStores::streaming) {
      _mm_stream_si128(out, first);
      _mm_stream_si128(out + 1, second);
      _mm_stream_si128(out + 2, third);
      _mm_stream_si128(out + 3, fourth);
    } else {
      _mm_storeu_si128(out, first);
      _mm_storeu_si128(out + 1, second);
      _mm_storeu_si128(out + 2, third);
      _mm_storeu_si128(out + 3, fourth);
    }
  }
  return done;
}

}  // namespace meshcomm::detail

#endif
