#include "step_time.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compute_model.hpp"
#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

/// Forward shares of a block's work: one GEMM of three, 4 of the attention's 14 flops per pair,
/// one of the two exponentials per visible pair, half the pairs visited, one of SiLU's three passes.
constexpr double kForwardGemm = 1.0 / 3.0;
constexpr double kForwardAttention = 4.0 / 14.0;
constexpr double kForwardPairs = 0.5;
constexpr double kForwardScans = 0.5;
constexpr double kForwardActivations = 1.0 / 3.0;

/// The attention part of `work` (forward or backward share).
ComputeWork attention_part(const ComputeWork& work, bool forward) {
  auto share = [forward](double forward_share) { return forward ? forward_share : 1 - forward_share; };
  return {.attention_flops = share(kForwardAttention) * work.attention_flops,
          .attention_pairs = share(kForwardPairs) * work.attention_pairs,
          .attention_scans = share(kForwardScans) * work.attention_scans};
}

/// The GEMM and activation part of `work` (forward or backward share).
ComputeWork dense_part(const ComputeWork& work, bool forward) {
  auto share = [forward](double forward_share) { return forward ? forward_share : 1 - forward_share; };
  return {.gemm_flops = share(kForwardGemm) * work.gemm_flops,
          .activations = share(kForwardActivations) * work.activations};
}

/// The sp exchange of one block, forward and backward, for all local sequences.
struct ExchangeTime {
  double transfer = 0;
  double exposed = 0;
  double ring_step_transfer = 0;
};

ExchangeTime exchange_time(const ModelShape& shape, const MeshChoice& choice, const MachineModel& machine,
                           const MeshLinks& links, const ShardSizes& sizes, double attention_forward,
                           double attention_backward) {
  ExchangeTime time;
  if (choice.sp == 1) return time;
  const double element = static_cast<double>(shape.element_bytes);
  const double rows = static_cast<double>(sizes.shard_rows);
  const double ranks = choice.sp;
  const double kv_rows_bytes = rows * 2.0 * static_cast<double>(sizes.kv_width()) * element;
  const double sequences = static_cast<double>(sizes.sequences);
  auto seconds = [&](CollectiveOp op, double bytes) { return collective_seconds(machine, op, bytes, links.sp); };
  switch (choice.exchange) {
    case SequenceExchange::ring: {
      // Each hop hides under one block's attention; dK and dV travel one hop more at the end.
      const double block = rows * static_cast<double>(sizeof(std::int64_t)) + kv_rows_bytes;
      const double forward_hop = seconds(CollectiveOp::sendrecv, block);
      const double backward_hop = seconds(CollectiveOp::sendrecv, block + kv_rows_bytes);
      const double forward_compute = attention_forward / sequences / ranks;
      const double backward_compute = attention_backward / sequences / ranks;
      const double last = seconds(CollectiveOp::sendrecv, kv_rows_bytes);
      time.transfer = sequences * ((ranks - 1) * (forward_hop + backward_hop) + last);
      time.exposed = sequences * ((ranks - 1) * (std::max(0.0, forward_hop - forward_compute) +
                                                 std::max(0.0, backward_hop - backward_compute)) +
                                  last);
      time.ring_step_transfer = forward_hop;
      return time;
    }
    case SequenceExchange::all_gather_kv: {
      const double whole = ranks * kv_rows_bytes / 2;
      time.transfer =
          sequences * 2 * (seconds(CollectiveOp::all_gather, whole) + seconds(CollectiveOp::reduce_scatter, whole));
      break;
    }
    case SequenceExchange::halo: {
      // The window's rows, from as many ranks to the left as it reaches.
      const double rows_sent = std::min(static_cast<double>(sizes.window_rows), (ranks - 1) * rows);
      const double hops = std::max(1.0, std::ceil(rows_sent / rows));
      const double bytes = rows_sent * kv_rows_bytes / rows;
      time.transfer = sequences * 2 * hops * seconds(CollectiveOp::sendrecv, bytes / hops);
      break;
    }
    case SequenceExchange::head_all_to_all: {
      const double query = rows * static_cast<double>(sizes.query_width()) * element;
      const double kv = kv_rows_bytes / 2;
      time.transfer =
          sequences * 2 * (2 * seconds(CollectiveOp::alltoall, query) + 2 * seconds(CollectiveOp::alltoall, kv));
      break;
    }
  }
  time.exposed = time.transfer;
  return time;
}

/// What each exchange call costs beyond its messages, as calibrated (forward and backward calls).
double exchange_call_seconds(const MeshChoice& choice, const MachineModel& machine, const ShardSizes& sizes) {
  if (choice.sp == 1) return 0;
  const auto found = machine.exchange_call_us.find(std::string(to_string(choice.exchange)));
  return found == machine.exchange_call_us.end() ? 0
                                                 : 2.0 * static_cast<double>(sizes.sequences) * found->second * 1e-6;
}

}  // namespace

double compute_seconds(const ComputeSpeed& speed, const ComputeWork& work) {
  return work.gemm_flops / speed.gemm_flops_per_s + work.attention_flops / speed.attention_flops_per_s +
         work.attention_pairs * speed.seconds_per_pair + work.attention_scans * speed.seconds_per_scan +
         work.activations / speed.activations_per_s + work.optimizer_bytes / speed.optimizer_bytes_per_s;
}

StepPrediction predict_step(const ModelShape& shape, const MeshChoice& choice, const MachineModel& machine,
                            const MeshLinks& links) {
  const ShardSizes sizes = shard_sizes(shape, choice);
  const ComputeWork work = block_work(shape, choice);
  const EndsWork ends = ends_work(shape, choice);
  // Ranks beside each other on a node contend for its caches and memory, which slows the GEMMs and
  // the activations; attention's loops keep to their core, and only take turns on it where
  // the ranks outnumber the cores.
  const double slowdown = machine.compute_slowdown(links.ranks_per_node);
  const double turns = machine.core_turns(links.ranks_per_node);
  const auto& speed = machine.compute;
  const double attention_forward = turns * compute_seconds(speed, attention_part(work, true));
  const double attention_backward = turns * compute_seconds(speed, attention_part(work, false));
  const double forward = attention_forward + slowdown * compute_seconds(speed, dense_part(work, true));
  const double backward = attention_backward + slowdown * compute_seconds(speed, dense_part(work, false));
  const double layers = static_cast<double>(shape.layers);
  const double element = static_cast<double>(shape.element_bytes);

  StepPrediction step;
  step.compute =
      layers * (forward + backward) + slowdown * compute_seconds(speed, {.gemm_flops = ends.gemm_flops,
                                                                         .activations = ends.activations,
                                                                         .optimizer_bytes = ends.optimizer_bytes});
  step.attention_compute = layers * (attention_forward + attention_backward);
  if (const auto found = machine.oversubscribed_layer_seconds.find(links.ranks_per_node);
      found != machine.oversubscribed_layer_seconds.end()) {
    step.turn_taking = layers * found->second;
  }
  step.tensor_parallel = layers * 4 *
                         collective_seconds(machine, CollectiveOp::all_reduce,
                                            static_cast<double>(sizes.rows * shape.width) * element, links.tp);
  const ExchangeTime exchange =
      exchange_time(shape, choice, machine, links, sizes, attention_forward, attention_backward);
  const double calls = exchange_call_seconds(choice, machine, sizes);
  step.sequence = layers * (exchange.exposed + calls);
  step.sequence_transfer = layers * (exchange.transfer + calls);
  step.ring_step_transfer = exchange.ring_step_transfer;
  step.ring_step_compute = choice.sp > 1 ? attention_forward / static_cast<double>(sizes.sequences) / choice.sp : 0;

  // FSDP: the first unit's gather is waited for; each later one loads under the unit before it,
  // and in the backward pass a gather and a reduce-scatter share each block's compute.
  const double shard_ranks = choice.shard_ranks();
  for (std::size_t unit = 0; unit < sizes.unit_padded.size(); ++unit) {
    const double whole = static_cast<double>(sizes.unit_padded[unit]) * element;
    const double gather = collective_seconds(machine, CollectiveOp::all_gather, whole, links.shard);
    const double reduce = collective_seconds(machine, CollectiveOp::reduce_scatter, whole, links.shard);
    const bool is_block = shape.vocab == 0 || (unit != 0 && unit + 1 != sizes.unit_padded.size());
    step.fsdp_transfer += (is_block ? 2 : 1) * gather + reduce;
    step.fsdp += unit == 0 ? gather : std::max(0.0, gather - forward);
    if (is_block) step.fsdp += std::max(0.0, gather + reduce - backward);
    if (!is_block && unit == 0) step.fsdp += reduce;  // the embedding's gradient goes last, with nothing to hide it
    step.replicas += collective_seconds(machine, CollectiveOp::all_reduce, whole / shard_ranks, links.replicas);
  }
  return step;
}

}  // namespace meshcomm::advisor
