#include "advice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "shard_sizes.hpp"

namespace meshcomm::advisor {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

std::vector<std::string> warnings_for(const ModelShape& shape, const MeshChoice& choice, const StepPrediction& time,
                                      const MeshLinks& links) {
  std::vector<std::string> warnings;
  if (links.tp.crosses_nodes) warnings.push_back(fmt::format("tp group of {} spans nodes", choice.tp));
  if (choice.exchange == SequenceExchange::ring && choice.sp > 1 && time.ring_step_transfer > time.ring_step_compute) {
    warnings.push_back(fmt::format("ring block below the size that hides its transfer ({:.3g} ms hop, {:.3g} ms block)",
                                   1e3 * time.ring_step_transfer, 1e3 * time.ring_step_compute));
  }
  const ShardSizes sizes = shard_sizes(shape, choice);
  if (choice.exchange == SequenceExchange::halo && choice.sp > 1 && sizes.window_rows > sizes.shard_rows) {
    warnings.push_back(
        fmt::format("halo of {} rows reaches past the neighbour's {} rows", sizes.window_rows, sizes.shard_rows));
  }
  if (choice.sp > 1 && links.sp.crosses_nodes) warnings.push_back("sp exchange crosses nodes");
  if (choice.shard_ranks() > 1) {
    const double smallest = static_cast<double>(*std::min_element(sizes.unit_padded.begin(), sizes.unit_padded.end())) *
                            static_cast<double>(shape.element_bytes) / choice.shard_ranks();
    if (smallest < kMiB) {
      warnings.push_back(fmt::format("shard messages under 1 MiB ({:.0f} KiB): latency-bound", smallest / 1024));
    }
  }
  return warnings;
}

/// Placement depends only on the sizes: choices that differ in exchange or folding share it.
using SizesKey = std::tuple<int, int, int, int>;

}  // namespace

MeshLinks mesh_links(const MeshChoice& choice, const Placement& placement, const Topology& topology,
                     int nics_per_node) {
  const MeshSpec spec = MeshSpec::parse(choice.mesh_text()).resolved(choice.world());
  const auto ranks = place_ranks(spec, placement, topology);
  auto links_of = [&](const std::vector<std::string_view>& axes) {
    return group_links(groups_over(spec, ranks, axes), topology, nics_per_node);
  };
  MeshLinks links;
  links.tp = links_of({"tp"});
  links.sp = links_of({"sp"});
  links.shard = choice.sp_in_shard ? links_of({"fsdp", "sp"}) : links_of({"fsdp"});
  links.replicas = choice.sp_in_shard ? links_of({"dp"}) : links_of({"dp", "sp"});
  links.ranks_per_node = topology.max_ranks_per_node();
  return links;
}

StepPrediction predict_on_one_node(const ModelShape& shape, const MeshChoice& choice, const MachineModel& machine) {
  const Topology topology = Topology::simulated(choice.world(), choice.world());
  return predict_step(shape, choice, machine, mesh_links(choice, Placement{}, topology, machine.nics_per_node));
}

Advice advise(const AdviceRequest& request, const Topology& topology) {
  const int world = topology.world_size();
  ChoiceSet set = enumerate_choices(world, request.shape, request.constraints);
  Advice advice;
  advice.pruned = std::move(set.pruned);
  std::map<std::pair<SizesKey, bool>, MeshLinks> links_by_sizes;
  for (const MeshChoice& choice : set.feasible) {
    const auto key = std::pair{SizesKey{choice.dp, choice.fsdp, choice.tp, choice.sp}, choice.sp_in_shard};
    auto found = links_by_sizes.find(key);
    if (found == links_by_sizes.end()) {
      found =
          links_by_sizes.emplace(key, mesh_links(choice, request.placement, topology, request.machine.nics_per_node))
              .first;
    }
    RankedChoice ranked{.choice = choice,
                        .time = predict_step(request.shape, choice, request.machine, found->second),
                        .memory = predict_memory_max(request.shape, choice),
                        .bytes = predict_step_bytes_max(request.shape, choice)};
    const double peak = static_cast<double>(ranked.memory.peak_total());
    if (peak > request.machine.memory_bytes) {
      advice.pruned.push_back({choice, fmt::format("memory {:.1f} GiB per rank over the budget of {:.1f} GiB",
                                                   peak / kGiB, request.machine.memory_bytes / kGiB)});
      continue;
    }
    ranked.warnings = warnings_for(request.shape, choice, ranked.time, found->second);
    advice.ranked.push_back(std::move(ranked));
  }
  std::stable_sort(advice.ranked.begin(), advice.ranked.end(), [](const RankedChoice& a, const RankedChoice& b) {
    if (a.time.step() != b.time.step()) return a.time.step() < b.time.step();
    return a.memory.peak_total() < b.memory.peak_total();
  });
  return advice;
}

std::string explain(const RankedChoice& first, const RankedChoice& second) {
  const double step_a = first.time.step();
  const double step_b = second.time.step();
  std::string text = fmt::format("{} beats {} by {:.3f} ms per step ({:.1f} against {:.1f} ms, {:.2f}%).\n",
                                 first.choice.label(), second.choice.label(), 1e3 * (step_b - step_a), 1e3 * step_a,
                                 1e3 * step_b, step_b > 0 ? 100.0 * (step_b - step_a) / step_b : 0.0);
  struct Part {
    const char* name;
    double a, b;
    const char* why;
  };
  const std::vector<Part> parts{
      {"compute", first.time.compute, second.time.compute, "work per rank: rows, heads and MLP columns it holds"},
      {"tp", first.time.tensor_parallel, second.time.tensor_parallel,
       "four all-reduces of the activations per block, never hidden"},
      {"sp", first.time.sequence, second.time.sequence, "the sequence exchange left exposed"},
      {"fsdp", first.time.fsdp, second.time.fsdp,
       "parameter gathers and gradient reduce-scatters not hidden by compute"},
      {"dp", first.time.replicas, second.time.replicas, "gradient all-reduces over the replicas"},
  };
  std::vector<Part> ordered = parts;
  std::sort(ordered.begin(), ordered.end(),
            [](const Part& x, const Part& y) { return std::abs(x.b - x.a) > std::abs(y.b - y.a); });
  // The parts that make the difference: those above 1% of the step, or the three largest on a near tie.
  const bool near_tie = std::abs(ordered.front().b - ordered.front().a) < 0.01 * std::max(step_a, step_b);
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const Part& part = ordered[i];
    const double difference = std::abs(part.b - part.a);
    if (difference < 1e-6 || (near_tie ? i >= 3 : difference < 0.01 * std::max(step_a, step_b))) continue;
    text += fmt::format("  {:<8} {:>10.3f} ms against {:>10.3f} ms ({}{:.3f} ms): {}\n", part.name, 1e3 * part.a,
                        1e3 * part.b, part.a <= part.b ? "-" : "+", 1e3 * std::abs(part.b - part.a), part.why);
  }
  text += fmt::format(
      "  memory   {:>10.2f} GiB against {:>10.2f} GiB per rank; bytes sent {:.3g} against {:.3g} GiB per step\n",
      static_cast<double>(first.memory.peak_total()) / kGiB, static_cast<double>(second.memory.peak_total()) / kGiB,
      static_cast<double>(first.bytes.total()) / kGiB, static_cast<double>(second.bytes.total()) / kGiB);
  return text;
}

}  // namespace meshcomm::advisor
