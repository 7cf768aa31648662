#include "training/synthetic_tokens.hpp"

namespace meshcomm::layers {

namespace {

/// A small portable generator (PCG-style LCG with an output mix).
struct TokenRandom {
  std::uint64_t state;
  std::uint64_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    std::uint64_t x = state;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    return x ^ (x >> 33);
  }
};

}  // namespace

std::vector<std::int32_t> synthetic_tokens(std::uint64_t seed, std::uint64_t step, std::size_t sequences,
                                           std::size_t length, std::size_t vocab) {
  TokenRandom random{seed * 0x9E3779B97F4A7C15ULL + step + 1};
  std::vector<std::int32_t> tokens(sequences * length);
  for (std::size_t s = 0; s < sequences; ++s) {
    std::uint64_t token = random.next() % vocab;
    for (std::size_t t = 0; t < length; ++t) {
      tokens[s * length + t] = static_cast<std::int32_t>(token);
      token = random.next() % 8 == 0 ? random.next() % vocab : (5 * token + 3) % vocab;
    }
  }
  return tokens;
}

}  // namespace meshcomm::layers
