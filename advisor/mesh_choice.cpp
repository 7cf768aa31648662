#include "mesh_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "meshcomm/error.hpp"

namespace meshcomm::advisor {

namespace {

constexpr std::array<std::string_view, 4> kAxisNames{"dp", "fsdp", "tp", "sp"};

bool allowed_for(const ModelShape& shape, SequenceExchange exchange) {
  switch (exchange) {
    case SequenceExchange::ring:
    case SequenceExchange::all_gather_kv:
      return !shape.sliding();
    case SequenceExchange::halo:
      return shape.sliding();
    case SequenceExchange::head_all_to_all:
      return true;
  }
  return false;
}

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) result.push_back(d);
  }
  return result;
}

bool matches(const ChoiceConstraints& constraints, const MeshChoice& choice) {
  const std::array<int, 4> sizes{choice.dp, choice.fsdp, choice.tp, choice.sp};
  for (const auto& [axis, size] : constraints.fixed) {
    for (std::size_t i = 0; i < kAxisNames.size(); ++i) {
      if (kAxisNames[i] == axis && sizes[i] != size) return false;
    }
  }
  return true;
}

}  // namespace

std::string_view to_string(SequenceExchange exchange) noexcept {
  switch (exchange) {
    case SequenceExchange::ring:
      return "ring";
    case SequenceExchange::all_gather_kv:
      return "all_gather_kv";
    case SequenceExchange::halo:
      return "halo";
    case SequenceExchange::head_all_to_all:
      return "head_all_to_all";
  }
  return "?";
}

const std::vector<SequenceExchange>& all_sequence_exchanges() {
  static const std::vector<SequenceExchange> all{SequenceExchange::ring, SequenceExchange::all_gather_kv,
                                                 SequenceExchange::halo, SequenceExchange::head_all_to_all};
  return all;
}

SequenceExchange parse_sequence_exchange(std::string_view text) {
  for (auto exchange : all_sequence_exchanges()) {
    if (to_string(exchange) == text) return exchange;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("--sp-exchange '{}' is not one of ring, all_gather_kv, halo, head_all_to_all", text));
}

std::string MeshChoice::mesh_text() const { return fmt::format("dp:{},fsdp:{},tp:{},sp:{}", dp, fsdp, tp, sp); }

std::string MeshChoice::shard_axes() const { return sp_in_shard ? "fsdp,sp" : "fsdp"; }

std::string MeshChoice::label() const {
  return fmt::format("dp{} fsdp{} tp{} sp{}{}", dp, fsdp, tp, sp,
                     sp == 1 ? std::string() : fmt::format(" {}{}", to_string(exchange), sp_in_shard ? " +sp" : ""));
}

void add_fixed_axes(ChoiceConstraints& constraints, std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    start = comma + 1;
    const std::size_t equals = part.find('=');
    const std::string_view axis = part.substr(0, equals);
    if (equals == std::string_view::npos || std::find(kAxisNames.begin(), kAxisNames.end(), axis) == kAxisNames.end()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--fix '{}' is not AXIS=SIZE with AXIS one of dp, fsdp, tp, sp", part));
    }
    int size = 0;
    const std::string_view value = part.substr(equals + 1);
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), size);
    if (error != std::errc{} || end != value.data() + value.size() || size < 1) {
      throw Error(ErrorCode::invalid_argument, fmt::format("--fix {}: '{}' is not a size of at least 1", axis, value));
    }
    constraints.fixed[std::string(axis)] = size;
  }
}

std::string infeasibility(const ModelShape& shape, const MeshChoice& choice) {
  const auto tp = static_cast<std::size_t>(choice.tp);
  const auto sp = static_cast<std::size_t>(choice.sp);
  if (shape.heads % tp != 0) return fmt::format("heads {} not divisible by tp {}", shape.heads, tp);
  if (shape.kv_heads % tp != 0) return fmt::format("kv-heads {} not divisible by tp {}", shape.kv_heads, tp);
  if (shape.hidden % tp != 0) return fmt::format("hidden {} not divisible by tp {}", shape.hidden, tp);
  if (shape.batch % static_cast<std::size_t>(choice.data_ranks()) != 0) {
    return fmt::format("batch {} not divisible by dp x fsdp {}", shape.batch, choice.data_ranks());
  }
  if (!allowed_for(shape, choice.exchange)) {
    return fmt::format("{} does not serve {} attention", to_string(choice.exchange),
                       shape.sliding() ? "sliding" : "full");
  }
  const bool zigzag = choice.exchange == SequenceExchange::ring || choice.exchange == SequenceExchange::all_gather_kv;
  const std::size_t shares = zigzag ? 2 * sp : sp;
  if (shape.sequence % shares != 0) {
    return fmt::format("sequence {} not divisible by {} {} shares", shape.sequence, shares,
                       zigzag ? "zigzag" : "contiguous");
  }
  if (choice.exchange == SequenceExchange::head_all_to_all &&
      ((shape.heads / tp) % sp != 0 || (shape.kv_heads / tp) % sp != 0)) {
    return fmt::format("heads per tp rank {} (kv {}) not divisible by sp {}", shape.heads / tp, shape.kv_heads / tp,
                       sp);
  }
  return {};
}

ChoiceSet enumerate_choices(int world, const ModelShape& shape, const ChoiceConstraints& constraints) {
  if (world < 1) throw Error(ErrorCode::invalid_argument, fmt::format("--world {} must be at least 1", world));
  ChoiceSet set;
  const auto& exchanges = constraints.exchanges.empty() ? all_sequence_exchanges() : constraints.exchanges;
  for (int dp : divisors(world)) {
    for (int fsdp : divisors(world / dp)) {
      for (int tp : divisors(world / dp / fsdp)) {
        const int sp = world / dp / fsdp / tp;
        bool sp_one_taken = false;
        for (auto exchange : exchanges) {
          if (!allowed_for(shape, exchange)) continue;
          for (bool folded : {false, true}) {
            if (sp == 1 && (folded || sp_one_taken)) continue;
            const MeshChoice choice{
                .dp = dp, .fsdp = fsdp, .tp = tp, .sp = sp, .exchange = exchange, .sp_in_shard = folded};
            if (!matches(constraints, choice)) continue;
            if (auto reason = infeasibility(shape, choice); !reason.empty()) {
              set.pruned.push_back({choice, std::move(reason)});
              continue;
            }
            if (sp == 1) sp_one_taken = true;
            set.feasible.push_back(choice);
          }
        }
      }
    }
  }
  return set;
}

}  // namespace meshcomm::advisor
