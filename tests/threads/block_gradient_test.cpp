// A whole transformer block's backward pass (fp32, as training runs it: residuals, norms,
// projections, attention through SequenceAttention, MLP) against the gradient of the same block
// computed a second, independent way: a float64 forward written again from the ops, differenced.
//
// Why the bound holds. The float64 difference is fourth order, (8(L(h) − L(−h)) − (L(2h) −
// L(−2h))) / 12h with h = 1e-3: its truncation error is h⁴/30·|L⁽⁵⁾| ≈ 3e-14·|L⁽⁵⁾| and its
// rounding error ≈ 2^-53·Σ|out·probe| / h ≈ 1e-11, both some 10⁵ below the bound. What remains is
// the fp32 arithmetic of the block under test. Each of its ~20 stages is a GEMM or a sum of at
// most 32 terms, which fp32 rounds by at most γ₃₂ = 32·2^-24 ≈ 2e-6 of the norms of its factors,
// and the block's stages are well conditioned (norms of factors and of results within a few-fold),
// so each tensor's gradient is off by a few 1e-6 of its norm whatever the summation order: measured
// 2.4e-7 to 7.3e-6 with every OpenBLAS kernel (Prescott, Sandybridge, Haswell, Zen, SkylakeX; 1 or
// 2 threads), the largest with Prescott's. The bound, 2e-4 of each tensor's own gradient norm, is
// ×27 that, and a missing term moves some tensor's gradient by ≥ 7e-2 of its norm (the mutation
// tests below), ×350 above it. Norms, never single values: a tensor's gradient norm is not near
// zero (checked), while one element or one directional derivative can be, by cancellation.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "attention/block_attention.hpp"
#include "harness/thread_ranks.hpp"
#include "model/transformer_block.hpp"
#include "ops/gradient_mutation.hpp"
#include "ops/linear.hpp"
#include "ops/rms_norm.hpp"
#include "ops/silu.hpp"

namespace meshcomm::testing {
namespace {

using layers::GradientMutation;
using Doubles = std::vector<double>;

/// Each tensor's fp32 gradient within this fraction of its float64 gradient's norm (see above).
constexpr double kRelativeBound = 2e-4;
/// The fourth-order difference's step.
constexpr double kStep = 1e-3;

std::vector<float> random_floats(std::size_t count, unsigned seed, float scale) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<float> values(count);
  for (auto& value : values) value = uniform(random);
  return values;
}

Doubles widened(const std::vector<float>& values) { return {values.begin(), values.end()}; }

template <class A, class B>
double dot(const A& a, const B& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

template <class A, class B>
double distance(std::span<const A> a, std::span<const B> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
  return std::sqrt(sum);
}

template <class T>
double norm(std::span<const T> values) {
  double sum = 0;
  for (T value : values) sum += double(value) * double(value);
  return std::sqrt(sum);
}

/// The block's forward in float64 on one rank, composed from the ops again (block_forward is what
/// is under test): x1 = x + W_o·attention(RMSNorm(x)), out = x1 + W_out·silu(W_in·RMSNorm(x1)).
class ReferenceBlock {
 public:
  ReferenceBlock(const layers::ModelConfig& config, const layers::ParameterLayout& layout,
                 std::span<const std::int64_t> positions)
      : config_(config), layout_(layout), positions_(positions.begin(), positions.end()) {}

  /// L = Σ out · probe.
  double loss(const Doubles& parameters, const Doubles& x, const Doubles& probe) const {
    return dot(forward(parameters, x), probe);
  }

  Doubles forward(const Doubles& parameters, const Doubles& x) const {
    const std::size_t rows = config_.sequence, width = config_.width, hidden = config_.hidden;
    const double eps = config_.norm_eps;
    auto tensor = [&](layers::BlockTensor which) { return parameters.data() + layout_.slots()[which].offset; };
    Doubles normed(rows * width), inverse(rows);
    layers::rms_norm_forward(x.data(), tensor(layers::norm1), normed.data(), inverse.data(), rows, width, eps);
    const layers::LinearShape square{.rows = rows, .in = width, .out = width};
    Doubles queries(rows * width), keys(rows * width), values(rows * width);
    layers::linear_forward(normed.data(), tensor(layers::query), queries.data(), square);
    layers::linear_forward(normed.data(), tensor(layers::key), keys.data(), square);
    layers::linear_forward(normed.data(), tensor(layers::value), values.data(), square);
    Doubles attended(rows * width, 0.0), lse(rows * config_.heads, -std::numeric_limits<double>::infinity());
    layers::block_attention_forward(queries.data(), positions_.data(), keys.data(), values.data(), positions_.data(),
                                    attended.data(), lse.data(),
                                    {.query_rows = rows, .key_rows = rows, .heads = config_.heads,
                                     .head_dim = config_.head_dim(), .causal = true,
                                     .window = config_.attention_window()});
    Doubles mid(rows * width);
    layers::linear_forward(attended.data(), tensor(layers::attention_out), mid.data(), square);
    for (std::size_t i = 0; i < mid.size(); ++i) mid[i] += x[i];
    Doubles mid_normed(rows * width);
    layers::rms_norm_forward(mid.data(), tensor(layers::norm2), mid_normed.data(), inverse.data(), rows, width, eps);
    Doubles activated(rows * hidden), out(rows * width);
    layers::linear_forward(mid_normed.data(), tensor(layers::mlp_in), activated.data(),
                           {.rows = rows, .in = width, .out = hidden});
    layers::silu_forward(activated.data(), activated.data(), activated.size());
    layers::linear_forward(activated.data(), tensor(layers::mlp_out), out.data(),
                           {.rows = rows, .in = hidden, .out = width});
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += mid[i];
    return out;
  }

 private:
  const layers::ModelConfig& config_;
  const layers::ParameterLayout& layout_;
  std::vector<std::int64_t> positions_;
};

/// f'(0) by the fourth-order central difference, for f(t) = `at(t)`.
template <class Function>
double fourth_order_difference(const Function& at) {
  return (8.0 * (at(kStep) - at(-kStep)) - (at(2 * kStep) - at(-2 * kStep))) / (12.0 * kStep);
}

/// d/dt loss(point + t·direction) at t = 0.
template <class Loss>
double directional_difference(const Doubles& point, const Doubles& direction, const Loss& loss) {
  return fourth_order_difference([&](double t) {
    Doubles moved(point);
    for (std::size_t i = 0; i < moved.size(); ++i) moved[i] += t * direction[i];
    return loss(moved);
  });
}

/// The gradient of loss at `point`, element by element.
template <class Loss>
Doubles gradient_by_differences(Doubles point, const Loss& loss) {
  Doubles gradient(point.size());
  for (std::size_t i = 0; i < point.size(); ++i) {
    const double kept = point[i];
    gradient[i] = fourth_order_difference([&](double t) {
      point[i] = kept + t;
      const double value = loss(point);
      point[i] = kept;
      return value;
    });
  }
  return gradient;
}

/// A block of `config` on one rank with its parameters, input and probe, run in fp32 by the
/// layers and in float64 by the reference.
struct BlockUnderTest {
  layers::ModelConfig config;
  layers::ParameterLayout layout;
  std::unique_ptr<layers::SequenceAttention> attention;
  std::vector<float> parameters, x, probe;
  std::vector<float> out, d_x, d_parameters;  ///< fp32 forward and backward

  BlockUnderTest(Communicator& world, const layers::ModelConfig& block_config)
      : config(block_config), layout(layers::block_layout(config, 1, 0)) {
    attention = layers::SequenceAttention::create(
        world, {.sequence = config.sequence, .heads = config.heads, .head_dim = config.head_dim(),
                .window = config.attention_window(), .exchange = config.exchange()});
    parameters = layout.initial_values(11, 1);
    for (auto& value : parameters) value *= 2.0F;  // away from the near-identity start
    const std::size_t elements = config.sequence * config.width;
    x = random_floats(elements, 1, 1.0F);
    probe = random_floats(elements, 2, 1.0F);
    const layers::BlockContext context{.config = config, .layout = layout, .tp = world, .attention = *attention};
    layers::BlockActivations saved;
    out.resize(elements);
    d_x.resize(elements);
    d_parameters.assign(parameters.size(), 0.0F);
    layers::block_forward(context, parameters.data(), x.data(), out.data(), saved);
    layers::block_backward(context, parameters.data(), saved, probe.data(), d_x.data(), d_parameters.data());
  }

  [[nodiscard]] ReferenceBlock reference() const { return {config, layout, attention->positions()}; }
};

layers::ModelConfig small_block(layers::AttentionKind attention) {
  layers::ModelConfig config;
  config.layers = 2;
  config.width = 16;
  config.heads = 2;
  config.hidden = 32;
  config.sequence = 12;
  config.attention = attention;
  config.window = 5;
  return config;
}

/// One tensor's gradient: its norm in float64 and the fp32 gradient's distance from it.
struct TensorError {
  std::string tensor;  ///< "d_x" or the parameter's name
  double reference_norm = 0;
  double distance = 0;
  [[nodiscard]] double relative() const { return distance / reference_norm; }
};

/// Every tensor's fp32 gradient against float64 differences of the reference, with `mutation`
/// in force during the fp32 backward. The first row is the forward output.
std::vector<TensorError> block_errors(layers::AttentionKind kind, GradientMutation mutation) {
  std::vector<TensorError> errors;
  run_ranks(1, [&](Communicator& world) {
    const layers::ScopedGradientMutation broken(mutation);
    const BlockUnderTest block(world, small_block(kind));
    const ReferenceBlock reference = block.reference();
    const Doubles parameters = widened(block.parameters), x = widened(block.x), probe = widened(block.probe);
    const Doubles out = reference.forward(parameters, x);
    errors.push_back({"out", norm<double>(out), distance<float, double>(block.out, out)});
    const Doubles d_x = gradient_by_differences(x, [&](const Doubles& at) { return reference.loss(parameters, at, probe); });
    errors.push_back({"d_x", norm<double>(d_x), distance<float, double>(block.d_x, d_x)});
    const Doubles d_parameters =
        gradient_by_differences(parameters, [&](const Doubles& at) { return reference.loss(at, x, probe); });
    for (const auto& slot : block.layout.slots()) {
      const std::span<const double> want(d_parameters.data() + slot.offset, slot.elements());
      const std::span<const float> got(block.d_parameters.data() + slot.offset, slot.elements());
      errors.push_back({"d_" + slot.name, norm(want), distance(got, want)});
    }
  });
  return errors;
}

std::string describe(const std::vector<TensorError>& errors) {
  std::string text;
  for (const auto& error : errors) {
    char relative[32];
    std::snprintf(relative, sizeof relative, "%.1e", error.relative());
    text += " " + error.tensor + "=" + relative;
  }
  return text;
}

void check_block(layers::AttentionKind kind) {
  const auto errors = block_errors(kind, GradientMutation::none);
  double largest_norm = 0;
  for (const auto& error : errors) largest_norm = std::max(largest_norm, error.reference_norm);
  for (const auto& error : errors) {
    // The bound is relative to the tensor's own norm: that norm must not be small by cancellation.
    EXPECT_GT(error.reference_norm, 1e-3 * largest_norm) << error.tensor << ": its gradient is near zero";
    EXPECT_LE(error.relative(), kRelativeBound) << error.tensor << " off by " << error.distance << " of "
                                                << error.reference_norm;
  }
  std::printf("relative errors (fp32 against float64):%s\n", describe(errors).c_str());
}

TEST(BlockGradient, FullAttentionMatchesFloat64Differences) { check_block(layers::AttentionKind::full); }
TEST(BlockGradient, SlidingWindowMatchesFloat64Differences) { check_block(layers::AttentionKind::sliding); }

/// A wider block (where single directional derivatives were small by cancellation), along random
/// directions: |∇L₃₂·u − D₆₄(u)| ≤ ‖∇L₃₂ − ∇L‖·‖u‖ ≤ bound·‖∇L‖·‖u‖ by Cauchy–Schwarz, whatever
/// ∇L·u itself is.
void check_wide_block(layers::AttentionKind kind) {
  run_ranks(1, [kind](Communicator& world) {
    layers::ModelConfig config = small_block(kind);
    config.width = 64;
    config.heads = 4;
    config.hidden = 128;
    config.sequence = 40;
    config.window = 9;
    const BlockUnderTest block(world, config);
    const ReferenceBlock reference = block.reference();
    const Doubles parameters = widened(block.parameters), x = widened(block.x), probe = widened(block.probe);
    double largest = 0;  // the largest |difference| / (‖∇L‖‖u‖) seen
    auto check = [&](const auto& gradient, const Doubles& point, unsigned seed, const auto& loss, const char* what) {
      const Doubles u = widened(random_floats(point.size(), seed, 1.0F));
      const double scale = norm<float>(gradient) * norm<double>(u);
      const double difference = dot(gradient, u) - directional_difference(point, u, loss);
      largest = std::max(largest, std::abs(difference) / scale);
      EXPECT_LE(std::abs(difference), kRelativeBound * scale) << what << " along direction " << seed;
    };
    for (unsigned trial = 0; trial < 6; ++trial) {
      check(block.d_x, x, 10 + trial, [&](const Doubles& at) { return reference.loss(parameters, at, probe); }, "d_x");
      check(block.d_parameters, parameters, 20 + trial,
            [&](const Doubles& at) { return reference.loss(at, x, probe); }, "d_parameters");
    }
    std::printf("largest |∇L₃₂·u − D₆₄(u)| / (‖∇L₃₂‖‖u‖): %.1e\n", largest);
  });
}

TEST(BlockGradient, WideFullAttentionAlongDirections) { check_wide_block(layers::AttentionKind::full); }
TEST(BlockGradient, WideSlidingWindowAlongDirections) { check_wide_block(layers::AttentionKind::sliding); }

/// The check has teeth: with one term of the backward left out, the tensors that term feeds are
/// off by more than 100 times the bound, and the others stay within it.
struct Mutation {
  GradientMutation mutation;
  std::vector<std::string> caught_in;  ///< the tensors whose gradient the missing term changes
};

class BlockGradientMutation
    : public ::testing::TestWithParam<std::tuple<Mutation, layers::AttentionKind>> {};

TEST_P(BlockGradientMutation, TheCheckCatchesIt) {
  const auto& [mutation, kind] = GetParam();
  const auto errors = block_errors(kind, mutation.mutation);
  for (const auto& error : errors) {
    const bool changed =
        std::find(mutation.caught_in.begin(), mutation.caught_in.end(), error.tensor) != mutation.caught_in.end();
    if (changed) {
      EXPECT_GT(error.relative(), 100 * kRelativeBound) << error.tensor << " must be caught";
    } else {
      EXPECT_LE(error.relative(), kRelativeBound) << error.tensor << " does not depend on the missing term";
    }
  }
  std::printf("%s:%s\n", std::string(to_string(mutation.mutation)).c_str(), describe(errors).c_str());
}

INSTANTIATE_TEST_SUITE_P(
    MissingTerms, BlockGradientMutation,
    ::testing::Combine(
        ::testing::Values(Mutation{GradientMutation::drop_residual, {"d_x"}},
                          Mutation{GradientMutation::zero_norm_gradient, {"d_norm1", "d_norm2"}},
                          Mutation{GradientMutation::drop_norm_correction,
                                   {"d_x", "d_norm1", "d_query", "d_key", "d_value", "d_attention_out"}},
                          Mutation{GradientMutation::drop_softmax_row_term, {"d_x", "d_norm1", "d_query", "d_key"}}),
        ::testing::Values(layers::AttentionKind::full, layers::AttentionKind::sliding)),
    [](const auto& test) {
      return std::string(to_string(std::get<0>(test.param).mutation)) + "_" +
             std::string(to_string(std::get<1>(test.param)));
    });

}  // namespace
}  // namespace meshcomm::testing
