#include "embedding.hpp"

#include <algorithm>
#include <string>

#include "meshcomm/error.hpp"

namespace meshcomm::layers {

void embedding_forward(const float* table, const std::int32_t* tokens, float* x, std::size_t rows, std::size_t vocab,
                       std::size_t width) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int32_t token = tokens[r];
    if (token < 0 || static_cast<std::size_t>(token) >= vocab) {
      throw Error(ErrorCode::invalid_argument, "embedding: token " + std::to_string(token) + " of row " +
                                                   std::to_string(r) + " is outside [0, " + std::to_string(vocab) +
                                                   ")");
    }
    std::copy_n(table + static_cast<std::size_t>(token) * width, width, x + r * width);
  }
}

void embedding_backward(const std::int32_t* tokens, const float* d_x, float* d_table, std::size_t rows,
                        std::size_t width) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* target = d_table + static_cast<std::size_t>(tokens[r]) * width;
    for (std::size_t i = 0; i < width; ++i) target[i] += d_x[r * width + i];
  }
}

}  // namespace meshcomm::layers
