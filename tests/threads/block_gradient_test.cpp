// A whole transformer block's backward pass (residuals, norms, projections, attention, MLP wired
// together) against central differences of its forward pass, along random directions.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "harness/thread_ranks.hpp"
#include "model/transformer_block.hpp"

namespace meshcomm::testing {
namespace {

std::vector<float> random_floats(std::size_t count, unsigned seed, float scale) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<float> values(count);
  for (auto& value : values) value = uniform(random);
  return values;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

/// In fp32 the block cannot be differenced element by element, so the check is directional:
/// (L(θ + εu) − L(θ − εu)) / 2ε against ∇L·u, for L = Σ out·probe, along random u for the input
/// and for the parameters. A wrong or missing term (a residual, a norm gradient) moves ∇L·u by
/// a large fraction; fp32 rounding and curvature move the difference quotient by ~1e-4 relative.
void check_block(layers::AttentionKind attention) {
  run_ranks(1, [attention](Communicator& world) {
    layers::ModelConfig config;
    config.layers = 2;
    config.width = 16;
    config.heads = 2;
    config.hidden = 32;
    config.sequence = 12;
    config.attention = attention;
    config.window = 5;
    const auto layout = layers::block_layout(config, 1, 0);
    auto attention_op = layers::SequenceAttention::create(
        world, {.sequence = config.sequence, .heads = config.heads, .head_dim = config.head_dim(),
                .window = config.attention_window(), .exchange = config.exchange()});
    const layers::BlockContext context{.config = config, .layout = layout, .tp = world, .attention = *attention_op};
    const std::size_t elements = config.sequence * config.width;
    auto parameters = layout.initial_values(11, 1);
    for (auto& value : parameters) value *= 2.0F;  // away from the near-identity start
    const auto x = random_floats(elements, 1, 1.0F);
    const auto probe = random_floats(elements, 2, 1.0F);

    auto loss = [&](const std::vector<float>& input, const std::vector<float>& weights) {
      layers::BlockActivations saved;
      std::vector<float> out(elements);
      layers::block_forward(context, weights.data(), input.data(), out.data(), saved);
      return dot(out, probe);
    };
    layers::BlockActivations saved;
    std::vector<float> out(elements), d_x(elements), d_parameters(parameters.size(), 0.0F);
    layers::block_forward(context, parameters.data(), x.data(), out.data(), saved);
    layers::block_backward(context, parameters.data(), saved, probe.data(), d_x.data(), d_parameters.data());

    constexpr float kStep = 2e-4F;  // small enough that curvature stays below the tolerance
    for (unsigned trial = 0; trial < 3; ++trial) {
      const auto u = random_floats(elements, 10 + trial, 1.0F);
      std::vector<float> above(x), below(x);
      for (std::size_t i = 0; i < elements; ++i) {
        above[i] += kStep * u[i];
        below[i] -= kStep * u[i];
      }
      const double numeric = (loss(above, parameters) - loss(below, parameters)) / (2.0 * double(kStep));
      const double analytic = dot(d_x, u);
      EXPECT_NEAR(analytic, numeric, 2e-3 * std::abs(numeric) + 1e-3) << "d_x along direction " << trial;

      const auto v = random_floats(parameters.size(), 20 + trial, 1.0F);
      std::vector<float> up(parameters), down(parameters);
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        up[i] += kStep * v[i];
        down[i] -= kStep * v[i];
      }
      const double numeric_parameters = (loss(x, up) - loss(x, down)) / (2.0 * double(kStep));
      const double analytic_parameters = dot(d_parameters, v);
      EXPECT_NEAR(analytic_parameters, numeric_parameters, 2e-3 * std::abs(numeric_parameters) + 1e-3)
          << "d_parameters along direction " << trial;
    }
  });
}

TEST(BlockGradient, FullAttentionMatchesDifferences) { check_block(layers::AttentionKind::full); }
TEST(BlockGradient, SlidingWindowMatchesDifferences) { check_block(layers::AttentionKind::sliding); }

}  // namespace
}  // namespace meshcomm::testing
