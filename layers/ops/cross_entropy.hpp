#pragma once

#include <cstddef>
#include <cstdint>

namespace meshcomm::layers {

/// Softmax cross-entropy of `rows` logit rows [rows, vocab] against `targets`. Returns the sum of
/// the row losses times `scale` and writes d_logits = scale · (softmax − one_hot(target)): with
/// scale = 1 / (tokens in the global batch), the gradients of every rank add up to those of the
/// mean loss. Throws Error(invalid_argument) for a target outside [0, vocab).
template <class T>
T cross_entropy(const T* logits, const std::int32_t* targets, T* d_logits, std::size_t rows, std::size_t vocab,
                T scale);

}  // namespace meshcomm::layers
