#include "model/transformer_block.hpp"

#include <algorithm>
#include <cmath>

#include "ops/gradient_mutation.hpp"
#include "ops/linear.hpp"
#include "ops/rms_norm.hpp"
#include "ops/silu.hpp"

namespace meshcomm::layers {

ParameterLayout block_layout(const ModelConfig& config, int tp, int tp_rank) {
  ParameterLayout layout(tp, tp_rank);
  const std::size_t width = config.width;
  const float input_std = 1.0F / std::sqrt(static_cast<float>(width));
  const float output_std = input_std / std::sqrt(2.0F * static_cast<float>(config.layers));
  const float mlp_std = 1.0F / std::sqrt(static_cast<float>(config.hidden));
  layout.add("norm1", 1, width, TensorSplit::replicated, 0, false);
  layout.add("query", width, width, TensorSplit::rows, input_std, true);
  layout.add("key", width, width, TensorSplit::rows, input_std, true);
  layout.add("value", width, width, TensorSplit::rows, input_std, true);
  layout.add("attention_out", width, width, TensorSplit::columns, output_std, true);
  layout.add("norm2", 1, width, TensorSplit::replicated, 0, false);
  layout.add("mlp_in", config.hidden, width, TensorSplit::rows, input_std, true);
  layout.add("mlp_out", width, config.hidden, TensorSplit::columns, mlp_std, true);
  return layout;
}

namespace {

struct Sizes {
  std::size_t rows;        ///< local rows of every local sequence
  std::size_t width;       ///< model width
  std::size_t projection;  ///< this rank's heads × head_dim
  std::size_t hidden;      ///< this rank's MLP columns
  std::size_t sequence_rows;
};

Sizes sizes_of(const BlockContext& context) {
  const auto& slots = context.layout.slots();
  return {.rows = context.sequences * context.attention.rows(),
          .width = context.config.width,
          .projection = slots[query].rows,
          .hidden = slots[mlp_in].rows,
          .sequence_rows = context.attention.rows()};
}

const float* tensor(const BlockContext& context, const float* parameters, BlockTensor which) {
  return parameters + context.layout.slots()[which].offset;
}

float* tensor(const BlockContext& context, float* parameters, BlockTensor which) {
  return parameters + context.layout.slots()[which].offset;
}

std::size_t& tensor_parallel_volume(const BlockContext& context) {
  static thread_local std::size_t ignored = 0;
  return context.volume != nullptr ? context.volume->tensor_parallel : ignored;
}

void progress(const BlockContext& context) {
  if (context.progress) context.progress();
}

void count_attention(const BlockContext& context, std::size_t before) {
  if (context.volume != nullptr) context.volume->attention += context.attention.traffic().bytes_sent - before;
}

}  // namespace

void block_forward(const BlockContext& context, const float* parameters, const float* x, float* x_out,
                   BlockActivations& saved) {
  const Sizes n = sizes_of(context);
  const float eps = context.config.norm_eps;
  saved.x.assign(x, x + n.rows * n.width);
  saved.normed.resize(n.rows * n.width);
  saved.inverse_rms.resize(n.rows);
  rms_norm_forward(x, tensor(context, parameters, norm1), saved.normed.data(), saved.inverse_rms.data(), n.rows,
                   n.width, eps);

  // Column-parallel Q, K, V: this rank's heads, no communication.
  const LinearShape projection{.rows = n.rows, .in = n.width, .out = n.projection};
  for (auto [which, output] : {std::pair{query, &saved.queries}, {key, &saved.keys}, {value, &saved.values}}) {
    output->resize(n.rows * n.projection);
    linear_forward(saved.normed.data(), tensor(context, parameters, which), output->data(), projection);
    progress(context);
  }
  saved.attended.resize(n.rows * n.projection);
  saved.attention.resize(context.sequences);
  const std::size_t traffic_before = context.attention.traffic().bytes_sent;
  for (std::size_t s = 0; s < context.sequences; ++s) {
    const std::size_t at = s * n.sequence_rows * n.projection;
    context.attention.forward(saved.queries.data() + at, saved.keys.data() + at, saved.values.data() + at,
                              saved.attended.data() + at, saved.attention[s]);
  }
  count_attention(context, traffic_before);
  progress(context);

  // Row-parallel output projection: partial sums, all-reduced over tp, then the residual.
  saved.mid.resize(n.rows * n.width);
  linear_forward(saved.attended.data(), tensor(context, parameters, attention_out), saved.mid.data(),
                 {.rows = n.rows, .in = n.projection, .out = n.width});
  all_reduce_sum(context.tp, saved.mid.data(), saved.mid.size(), tensor_parallel_volume(context));
  for (std::size_t i = 0; i < saved.mid.size(); ++i) saved.mid[i] += x[i];

  saved.mid_normed.resize(n.rows * n.width);
  saved.mid_inverse_rms.resize(n.rows);
  rms_norm_forward(saved.mid.data(), tensor(context, parameters, norm2), saved.mid_normed.data(),
                   saved.mid_inverse_rms.data(), n.rows, n.width, eps);
  saved.hidden.resize(n.rows * n.hidden);
  saved.activated.resize(n.rows * n.hidden);
  linear_forward(saved.mid_normed.data(), tensor(context, parameters, mlp_in), saved.hidden.data(),
                 {.rows = n.rows, .in = n.width, .out = n.hidden});
  progress(context);
  silu_forward(saved.hidden.data(), saved.activated.data(), saved.hidden.size());
  linear_forward(saved.activated.data(), tensor(context, parameters, mlp_out), x_out,
                 {.rows = n.rows, .in = n.hidden, .out = n.width});
  all_reduce_sum(context.tp, x_out, n.rows * n.width, tensor_parallel_volume(context));
  for (std::size_t i = 0; i < n.rows * n.width; ++i) x_out[i] += saved.mid[i];
}

void block_backward(const BlockContext& context, const float* parameters, BlockActivations& saved,
                    const float* d_x_out, float* d_x, float* d_parameters) {
  const Sizes n = sizes_of(context);
  // MLP: row-parallel out, SiLU, column-parallel in (its input gradient all-reduced over tp).
  std::vector<float> d_activated(n.rows * n.hidden);
  linear_backward(saved.activated.data(), tensor(context, parameters, mlp_out), d_x_out, d_activated.data(),
                  tensor(context, d_parameters, mlp_out), {.rows = n.rows, .in = n.hidden, .out = n.width});
  progress(context);
  std::vector<float> d_hidden(n.rows * n.hidden);
  silu_backward(saved.hidden.data(), d_activated.data(), d_hidden.data(), d_hidden.size());
  std::vector<float> d_normed(n.rows * n.width);
  linear_backward(saved.mid_normed.data(), tensor(context, parameters, mlp_in), d_hidden.data(), d_normed.data(),
                  tensor(context, d_parameters, mlp_in), {.rows = n.rows, .in = n.width, .out = n.hidden});
  progress(context);
  all_reduce_sum(context.tp, d_normed.data(), d_normed.size(), tensor_parallel_volume(context));
  std::vector<float> d_mid(n.rows * n.width);
  rms_norm_backward(saved.mid.data(), tensor(context, parameters, norm2), saved.mid_inverse_rms.data(),
                    d_normed.data(), d_mid.data(), tensor(context, d_parameters, norm2), n.rows, n.width);
  for (std::size_t i = 0; i < d_mid.size(); ++i) d_mid[i] += d_x_out[i];

  // Attention: row-parallel output projection, the sp exchange, column-parallel Q, K, V.
  std::vector<float> d_attended(n.rows * n.projection);
  linear_backward(saved.attended.data(), tensor(context, parameters, attention_out), d_mid.data(),
                  d_attended.data(), tensor(context, d_parameters, attention_out),
                  {.rows = n.rows, .in = n.projection, .out = n.width});
  std::vector<float> d_queries(n.rows * n.projection), d_keys(n.rows * n.projection), d_values(n.rows * n.projection);
  const std::size_t traffic_before = context.attention.traffic().bytes_sent;
  for (std::size_t s = 0; s < context.sequences; ++s) {
    const std::size_t at = s * n.sequence_rows * n.projection;
    context.attention.backward(saved.queries.data() + at, saved.keys.data() + at, saved.values.data() + at,
                               saved.attended.data() + at, d_attended.data() + at, saved.attention[s],
                               d_queries.data() + at, d_keys.data() + at, d_values.data() + at);
  }
  count_attention(context, traffic_before);
  progress(context);
  const LinearShape projection{.rows = n.rows, .in = n.width, .out = n.projection};
  bool accumulate = false;
  for (auto [which, gradient] : {std::pair{query, &d_queries}, {key, &d_keys}, {value, &d_values}}) {
    linear_backward(saved.normed.data(), tensor(context, parameters, which), gradient->data(), d_normed.data(),
                    tensor(context, d_parameters, which), projection, accumulate);
    accumulate = true;
    progress(context);
  }
  all_reduce_sum(context.tp, d_normed.data(), d_normed.size(), tensor_parallel_volume(context));
  rms_norm_backward(saved.x.data(), tensor(context, parameters, norm1), saved.inverse_rms.data(), d_normed.data(),
                    d_x, tensor(context, d_parameters, norm1), n.rows, n.width);
  if (active_gradient_mutation() == GradientMutation::drop_residual) return;
  for (std::size_t i = 0; i < n.rows * n.width; ++i) d_x[i] += d_mid[i];
}

}  // namespace meshcomm::layers
