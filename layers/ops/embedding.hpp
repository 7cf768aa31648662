#pragma once

#include <cstddef>
#include <cstdint>

namespace meshcomm::layers {

/// x[r] = table[tokens[r]] for `rows` tokens; table [vocab, width]. Throws Error(invalid_argument)
/// for a token outside [0, vocab).
void embedding_forward(const float* table, const std::int32_t* tokens, float* x, std::size_t rows, std::size_t vocab,
                       std::size_t width);

/// d_table[tokens[r]] += d_x[r].
void embedding_backward(const std::int32_t* tokens, const float* d_x, float* d_table, std::size_t rows,
                        std::size_t width);

}  // namespace meshcomm::layers
