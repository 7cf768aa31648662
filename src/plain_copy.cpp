#include "plain_copy.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace meshcomm::detail {

namespace {

#if defined(__x86_64__)
/// Copies in 64-byte steps of 16-byte loads and stores (SSE2, which every x86-64 has), never
/// `rep movsb`; the last partial step with memcpy.
void copy_in_vector_moves(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
  constexpr std::size_t kStep = 64;
  std::size_t at = 0;
  for (; at + kStep <= bytes; at += kStep) {
    const auto* source = reinterpret_cast<const __m128i*>(from + at);
    auto* destination = reinterpret_cast<__m128i*>(to + at);
    const __m128i first = _mm_loadu_si128(source);
    const __m128i second = _mm_loadu_si128(source + 1);
    const __m128i third = _mm_loadu_si128(source + 2);
    const __m128i fourth = _mm_loadu_si128(source + 3);
    _mm_storeu_si128(destination, first);
    _mm_storeu_si128(destination + 1, second);
    _mm_storeu_si128(destination + 2, third);
    _mm_storeu_si128(destination + 3, fourth);
  }
  std::memcpy(to + at, from + at, bytes - at);
}
#endif

}  // namespace

void plain_copy(void* to, const void* from, std::size_t bytes) noexcept {
#if defined(__x86_64__)
  if (bytes >= kOutOfStepCopyFrom && out_of_step(to, from)) {
    copy_in_vector_moves(static_cast<std::byte*>(to), static_cast<const std::byte*>(from), bytes);
    return;
  }
#endif
  std::memcpy(to, from, bytes);
}

}  // namespace meshcomm::detail
