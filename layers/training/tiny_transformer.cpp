#include "training/tiny_transformer.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "attention/sequence_attention.hpp"
#include "model/model_ends.hpp"
#include "model/transformer_block.hpp"
#include "ops/embedding.hpp"
#include "training/fsdp_unit.hpp"
#include "training/synthetic_tokens.hpp"

namespace meshcomm::layers {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The axes among dp, fsdp, sp that do not shard the parameters: the ranks over them hold the
/// same shard and sum their gradients.
std::vector<std::string_view> replica_axes(const std::vector<std::string>& shard_axes) {
  std::vector<std::string_view> axes;
  for (std::string_view axis : {"dp", "fsdp", "sp"}) {
    if (std::find(shard_axes.begin(), shard_axes.end(), axis) == shard_axes.end()) axes.push_back(axis);
  }
  return axes;
}

std::size_t bytes_of(const std::vector<float>& values) { return values.size() * sizeof(float); }

std::size_t activation_bytes(const BlockActivations& saved) {
  std::size_t bytes = 0;
  for (const auto* part : {&saved.x, &saved.normed, &saved.inverse_rms, &saved.queries, &saved.keys, &saved.values,
                           &saved.attended, &saved.mid, &saved.mid_normed, &saved.mid_inverse_rms, &saved.hidden,
                           &saved.activated}) {
    bytes += bytes_of(*part);
  }
  for (const auto& attention : saved.attention) {
    for (const auto* part : {&attention.lse, &attention.queries, &attention.keys, &attention.values, &attention.out}) {
      bytes += bytes_of(*part);
    }
  }
  return bytes;
}

}  // namespace

struct TinyTransformer::State {
  ModelConfig config;
  Mesh& mesh;
  Communicator& tp;
  Communicator& sp;
  Communicator& data;        ///< dp × fsdp: who gets which sequences
  Communicator& loss_group;  ///< dp × fsdp × sp: every rank with a distinct share of the tokens
  Communicator& shard;
  Communicator* replicas = nullptr;
  std::unique_ptr<SequenceAttention> attention;
  CommunicationVolume volume;
  MemoryGauge gathered_parameters, full_gradients;
  std::size_t activations_peak = 0;
  std::vector<FsdpUnit> units;  ///< embedding, blocks, output
  std::size_t sequences = 0;    ///< local batch
  std::size_t steps_taken = 0;

  State(Mesh& mesh_in, const ModelConfig& config_in)
      : config(config_in),
        mesh(mesh_in),
        tp(mesh_in.comm({"tp"})),
        sp(mesh_in.comm({"sp"})),
        data(mesh_in.comm({"dp", "fsdp"})),
        loss_group(mesh_in.comm({"dp", "fsdp", "sp"})),
        shard(mesh_in.comm(shard_axis_views(config_in))) {
    validate(config, tp.size(), sp.size(), data.size());
    const auto others = replica_axes(config.fsdp_axes);
    if (!others.empty()) replicas = &mesh.comm(others);
    attention = SequenceAttention::create(sp, {.sequence = config.sequence,
                                               .heads = config.heads / static_cast<std::size_t>(tp.size()),
                                               .head_dim = config.head_dim(),
                                               .window = config.attention_window(),
                                               .exchange = config.exchange()});
    sequences = config.batch / static_cast<std::size_t>(data.size());
    const FsdpGroups groups{shard, replicas, volume, gathered_parameters, full_gradients};
    std::vector<ParameterLayout> layouts;
    layouts.push_back(embedding_layout(config, tp.size(), tp.rank()));
    for (std::size_t layer = 0; layer < config.layers; ++layer) layouts.push_back(block_layout(config, tp.size(), tp.rank()));
    layouts.push_back(output_layout(config, tp.size(), tp.rank()));
    units.reserve(layouts.size());
    for (std::size_t unit = 0; unit < layouts.size(); ++unit) {
      const auto initial = layouts[unit].initial_values(config.seed, unit);
      units.emplace_back(std::move(layouts[unit]), initial, groups);
    }
  }

  static std::vector<std::string_view> shard_axis_views(const ModelConfig& config) {
    return {config.fsdp_axes.begin(), config.fsdp_axes.end()};
  }

  [[nodiscard]] std::size_t rows() const { return sequences * attention->rows(); }

  /// This rank's input tokens and next-token targets, sequence after sequence, rows in layout order.
  void local_tokens(std::uint64_t step, std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) const {
    const std::size_t length = config.sequence + 1;
    const auto batch = synthetic_tokens(config.seed, step, config.batch, length, config.vocab);
    const std::size_t first = static_cast<std::size_t>(data.rank()) * sequences;
    inputs.clear();
    targets.clear();
    for (std::size_t s = first; s < first + sequences; ++s) {
      for (const std::int64_t position : attention->positions()) {
        const std::size_t at = s * length + static_cast<std::size_t>(position);
        inputs.push_back(batch[at]);
        targets.push_back(batch[at + 1]);
      }
    }
  }

  /// `in_flight`: the units whose gather or reduction runs while this block computes.
  [[nodiscard]] BlockContext block_context(const ParameterLayout& layout, std::vector<FsdpUnit*> in_flight) {
    return {.config = config, .layout = layout, .tp = tp, .attention = *attention, .sequences = sequences,
            .volume = &volume, .progress = [in_flight = std::move(in_flight)] {
              for (FsdpUnit* unit : in_flight) unit->progress();
            }};
  }

  StepReport train_step(std::uint64_t step) {
    const auto started = Clock::now();
    const CommunicationVolume volume_before = volume;
    std::vector<std::int32_t> inputs, targets;
    local_tokens(step, inputs, targets);
    const std::size_t width = config.width;
    const std::size_t layers = config.layers;
    std::vector<float> x(rows() * width), next(rows() * width);
    std::vector<BlockActivations> saved(layers);
    StepReport report;
    auto gathered = [&report](FsdpUnit& unit) {
      const auto waiting = Clock::now();
      const float* parameters = unit.wait_gather();
      report.gather_wait_seconds += seconds_since(waiting);
      return parameters;
    };

    // Forward, each layer's parameters gathered while the previous layer computes.
    units[0].start_gather();
    embedding_forward(gathered(units[0]), inputs.data(), x.data(), rows(), config.vocab, width);
    if (config.prefetch) units[1].start_gather();
    units[0].release();
    auto blocks_started = Clock::now();
    for (std::size_t layer = 0; layer < layers; ++layer) {
      FsdpUnit& unit = units[layer + 1];
      const float* parameters = gathered(unit);
      if (config.prefetch) units[layer + 2].start_gather();
      block_forward(block_context(unit.layout(), {&units[layer + 2]}), parameters, x.data(), next.data(),
                    saved[layer]);
      unit.release();
      std::swap(x, next);
    }
    report.block_seconds += seconds_since(blocks_started);
    std::size_t kept = 0;
    for (const auto& block : saved) kept += activation_bytes(block);
    activations_peak = std::max(activations_peak, kept);

    // The output unit's forward and backward at once; its gradient goes to reduce right away.
    FsdpUnit& output = units.back();
    const float tokens = static_cast<float>(config.batch * config.sequence);
    std::vector<float> d_x(rows() * width), d_next(rows() * width);
    float loss = output_loss_and_backward(config, output.layout(), gathered(output), x.data(), targets.data(),
                                          rows(), 1.0F / tokens, d_x.data(), output.gradient());
    output.release();
    output.start_reduce();
    // At most two whole-layer gradients exist: the one just started and the one before it,
    // finished (and freed) once the next has started.
    FsdpUnit* reducing = &output;
    auto reduce_behind = [&reducing](FsdpUnit& unit) {
      unit.start_reduce();
      reducing->finish_reduce();
      reducing = &unit;
    };

    // Backward, gathering each layer again one ahead, reduce-scattering its gradient behind.
    blocks_started = Clock::now();
    if (layers > 0 && config.prefetch) units[layers].start_gather();
    for (std::size_t layer = layers; layer-- > 0;) {
      FsdpUnit& unit = units[layer + 1];
      const float* parameters = gathered(unit);
      if (layer > 0 && config.prefetch) units[layer].start_gather();
      std::vector<FsdpUnit*> in_flight{reducing};
      if (layer > 0) in_flight.push_back(&units[layer]);
      block_backward(block_context(unit.layout(), std::move(in_flight)), parameters, saved[layer], d_x.data(),
                     d_next.data(), unit.gradient());
      unit.release();
      reduce_behind(unit);
      saved[layer] = {};
      std::swap(d_x, d_next);
    }
    report.block_seconds += seconds_since(blocks_started);
    embedding_backward(inputs.data(), d_x.data(), units[0].gradient(), rows(), width);
    reduce_behind(units[0]);
    reducing->finish_reduce();

    steps_taken += 1;
    for (FsdpUnit& unit : units) unit.step(config.optimizer, steps_taken);
    loss_group.all_reduce(ConstBufferView(&loss, 1, DataType::f32), BufferView(&loss, 1, DataType::f32)).wait();
    report.loss = loss;
    report.step_seconds = seconds_since(started);
    report.volume = difference(volume, volume_before);
    return report;
  }

  static CommunicationVolume difference(const CommunicationVolume& after, const CommunicationVolume& before) {
    return {.tensor_parallel = after.tensor_parallel - before.tensor_parallel,
            .attention = after.attention - before.attention,
            .fsdp_gather = after.fsdp_gather - before.fsdp_gather,
            .fsdp_reduce = after.fsdp_reduce - before.fsdp_reduce,
            .replica_reduce = after.replica_reduce - before.replica_reduce};
  }
};

TinyTransformer::TinyTransformer(Mesh& mesh, const ModelConfig& config)
    : state_(std::make_unique<State>(mesh, config)) {}
TinyTransformer::TinyTransformer(TinyTransformer&&) noexcept = default;
TinyTransformer& TinyTransformer::operator=(TinyTransformer&&) noexcept = default;
TinyTransformer::~TinyTransformer() = default;

StepReport TinyTransformer::train_step(std::uint64_t step) { return state_->train_step(step); }

MemoryReport TinyTransformer::memory() const {
  MemoryReport report;
  for (const FsdpUnit& unit : state_->units) {
    report.parameter_shards += unit.shard_bytes();
    report.gradient_shards += unit.shard_bytes();
    report.optimizer += unit.optimizer_bytes();
  }
  report.gathered_parameters_peak = state_->gathered_parameters.peak;
  report.whole_gradients_peak = state_->full_gradients.peak;
  report.activations_peak = state_->activations_peak;
  return report;
}

std::size_t TinyTransformer::local_rows() const { return state_->attention->rows(); }
std::size_t TinyTransformer::local_sequences() const { return state_->sequences; }

double TinyTransformer::halo_overhead_percent() const {
  const auto& traffic = state_->attention->traffic();
  return traffic.own_rows == 0 ? 0.0
                               : 100.0 * static_cast<double>(traffic.extra_key_rows) /
                                     static_cast<double>(traffic.own_rows);
}

}  // namespace meshcomm::layers
