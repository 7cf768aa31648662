// Every layer's hand-written backward pass against central finite differences, all in float64.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "attention/block_attention.hpp"
#include "ops/cross_entropy.hpp"
#include "ops/linear.hpp"
#include "ops/rms_norm.hpp"
#include "ops/silu.hpp"

namespace meshcomm::layers {
namespace {

using Vector = std::vector<double>;

Vector random_vector(std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Vector values(count);
  for (auto& value : values) value = uniform(random);
  return values;
}

double dot(const Vector& a, const Vector& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

/// Checks `analytic` = d/d`input` of the scalar `loss()` by central differences (step 1e-6,
/// tolerance 1e-6 relative to the largest gradient, or absolute below 1).
void expect_gradient(Vector& input, const Vector& analytic, const std::function<double()>& loss,
                     const char* what) {
  ASSERT_EQ(input.size(), analytic.size()) << what;
  double largest = 1.0;
  for (double value : analytic) largest = std::max(largest, std::abs(value));
  constexpr double kStep = 1e-6;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const double kept = input[i];
    input[i] = kept + kStep;
    const double above = loss();
    input[i] = kept - kStep;
    const double below = loss();
    input[i] = kept;
    const double numeric = (above - below) / (2 * kStep);
    ASSERT_NEAR(analytic[i], numeric, 1e-6 * largest) << what << " element " << i;
  }
}

TEST(LayerGradients, RmsNorm) {
  const std::size_t rows = 3, width = 8;
  Vector x = random_vector(rows * width, 1), weight = random_vector(width, 2), probe = random_vector(rows * width, 3);
  Vector y(rows * width), inverse(rows);
  auto loss = [&] {
    rms_norm_forward(x.data(), weight.data(), y.data(), inverse.data(), rows, width, 1e-5);
    return dot(y, probe);
  };
  loss();
  Vector d_x(rows * width), d_weight(width, 0.0);
  rms_norm_backward(x.data(), weight.data(), inverse.data(), probe.data(), d_x.data(), d_weight.data(), rows, width);
  expect_gradient(x, d_x, loss, "rms_norm d_x");
  expect_gradient(weight, d_weight, loss, "rms_norm d_weight");
}

TEST(LayerGradients, Linear) {
  const LinearShape shape{.rows = 4, .in = 6, .out = 5};
  Vector x = random_vector(shape.rows * shape.in, 4), weight = random_vector(shape.out * shape.in, 5);
  Vector probe = random_vector(shape.rows * shape.out, 6), y(shape.rows * shape.out);
  auto loss = [&] {
    linear_forward(x.data(), weight.data(), y.data(), shape);
    return dot(y, probe);
  };
  Vector d_x(x.size()), d_weight(weight.size(), 0.0);
  linear_backward(x.data(), weight.data(), probe.data(), d_x.data(), d_weight.data(), shape);
  expect_gradient(x, d_x, loss, "linear d_x");
  expect_gradient(weight, d_weight, loss, "linear d_weight");
}

TEST(LayerGradients, Silu) {
  Vector x = random_vector(16, 7), probe = random_vector(16, 8), y(16), d_x(16);
  for (auto& value : x) value *= 4;  // both tails of the sigmoid
  auto loss = [&] {
    silu_forward(x.data(), y.data(), x.size());
    return dot(y, probe);
  };
  silu_backward(x.data(), probe.data(), d_x.data(), x.size());
  expect_gradient(x, d_x, loss, "silu d_x");
}

TEST(LayerGradients, CrossEntropy) {
  const std::size_t rows = 4, vocab = 7;
  Vector logits = random_vector(rows * vocab, 9), d_logits(rows * vocab), scratch(rows * vocab);
  const std::vector<std::int32_t> targets{0, 6, 3, 3};
  const double scale = 0.25;
  cross_entropy(logits.data(), targets.data(), d_logits.data(), rows, vocab, scale);
  expect_gradient(logits, d_logits,
                  [&] { return cross_entropy(logits.data(), targets.data(), scratch.data(), rows, vocab, scale); },
                  "cross_entropy d_logits");
}

/// Attention forward and backward for one block shape (positions 0.., queries from `first_query`).
void check_attention(const BlockShape& shape, std::int64_t first_query) {
  const std::size_t row = shape.heads * shape.head_dim;
  Vector q = random_vector(shape.query_rows * row, 10), k = random_vector(shape.key_rows * row, 11);
  Vector v = random_vector(shape.key_rows * row, 12), probe = random_vector(shape.query_rows * row, 13);
  std::vector<std::int64_t> query_positions(shape.query_rows), key_positions(shape.key_rows);
  for (std::size_t i = 0; i < shape.query_rows; ++i) query_positions[i] = first_query + static_cast<std::int64_t>(i);
  for (std::size_t i = 0; i < shape.key_rows; ++i) key_positions[i] = static_cast<std::int64_t>(i);
  Vector out(q.size()), lse(shape.query_rows * shape.heads);
  auto loss = [&] {
    std::fill(out.begin(), out.end(), 0.0);
    std::fill(lse.begin(), lse.end(), -std::numeric_limits<double>::infinity());
    block_attention_forward(q.data(), query_positions.data(), k.data(), v.data(), key_positions.data(), out.data(),
                            lse.data(), shape);
    return dot(out, probe);
  };
  loss();
  Vector delta(shape.query_rows * shape.heads), d_q(q.size(), 0.0), d_k(k.size(), 0.0), d_v(v.size(), 0.0);
  attention_delta(out.data(), probe.data(), delta.data(), shape.query_rows, shape.heads, shape.head_dim);
  block_attention_backward(q.data(), query_positions.data(), k.data(), v.data(), key_positions.data(), lse.data(),
                           probe.data(), delta.data(), d_q.data(), d_k.data(), d_v.data(), shape);
  expect_gradient(q, d_q, loss, "attention d_queries");
  expect_gradient(k, d_k, loss, "attention d_keys");
  expect_gradient(v, d_v, loss, "attention d_values");
}

TEST(LayerGradients, CausalAttention) {
  check_attention({.query_rows = 5, .key_rows = 9, .heads = 2, .head_dim = 4, .causal = true}, 4);
}

TEST(LayerGradients, SlidingWindowAttention) {
  check_attention({.query_rows = 6, .key_rows = 10, .heads = 2, .head_dim = 4, .causal = true, .window = 3}, 4);
}

TEST(LayerGradients, SlidingWindowMasksEverythingOutside) {
  // Keys 0..9, query at 9 with a window of 3 sees keys 7, 8, 9 only: moving key 6 changes nothing.
  const BlockShape shape{.query_rows = 1, .key_rows = 10, .heads = 1, .head_dim = 2, .causal = true, .window = 3};
  Vector q{1.0, 0.5}, k = random_vector(20, 14), v = random_vector(20, 15), out(2, 0.0), lse(1);
  const std::int64_t query_position = 9;
  std::vector<std::int64_t> key_positions{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto run = [&] {
    std::fill(out.begin(), out.end(), 0.0);
    lse[0] = -std::numeric_limits<double>::infinity();
    block_attention_forward(q.data(), &query_position, k.data(), v.data(), key_positions.data(), out.data(),
                            lse.data(), shape);
    return out;
  };
  const Vector before = run();
  k[12] += 5.0;  // key 6
  v[13] -= 3.0;
  EXPECT_EQ(run(), before);
}

}  // namespace
}  // namespace meshcomm::layers
