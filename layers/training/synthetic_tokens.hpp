#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshcomm::layers {

/// A learnable synthetic language for next-token training: each sequence starts at a random
/// token and mostly follows t → (5t + 3) mod vocab, with one token in eight drawn at random. The
/// same (seed, step) gives the same batch everywhere, whatever the mesh.
/// Returns [sequences, length] tokens, row-major.
std::vector<std::int32_t> synthetic_tokens(std::uint64_t seed, std::uint64_t step, std::size_t sequences,
                                           std::size_t length, std::size_t vocab);

}  // namespace meshcomm::layers
