#include "model/model_config.hpp"

#include <algorithm>
#include <set>

#include "meshcomm/error.hpp"

namespace meshcomm::layers {

namespace {

[[noreturn]] void reject(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, "model config: " + message);
}

std::string text(std::size_t value) { return std::to_string(value); }

void require_divisible(std::string_view what, std::size_t value, std::string_view by_what, std::size_t by) {
  if (by == 0 || value % by != 0) {
    reject(std::string(what) + " " + text(value) + " must be divisible by " + std::string(by_what) + " " + text(by));
  }
}

}  // namespace

AttentionExchange ModelConfig::exchange() const {
  if (shard == AttentionShard::heads) return AttentionExchange::head_all_to_all;
  if (attention == AttentionKind::sliding) return AttentionExchange::halo;
  return full_kv == FullAttentionKv::ring ? AttentionExchange::ring : AttentionExchange::all_gather_kv;
}

void validate(const ModelConfig& config, int tp, int sp, int data_ranks) {
  for (auto [name, value] : {std::pair{"layers", config.layers}, {"width", config.width}, {"heads", config.heads},
                             {"hidden", config.hidden}, {"vocab", config.vocab}, {"sequence", config.sequence},
                             {"batch", config.batch}}) {
    if (value == 0) reject(std::string(name) + " is 0; it must be at least 1");
  }
  require_divisible("width", config.width, "heads", config.heads);
  require_divisible("heads", config.heads, "tp", static_cast<std::size_t>(tp));
  require_divisible("hidden", config.hidden, "tp", static_cast<std::size_t>(tp));
  require_divisible("batch", config.batch, "dp x fsdp", static_cast<std::size_t>(data_ranks));
  const std::size_t shares = SequenceAttention::layout_for(config.exchange()) == SequenceLayout::zigzag
                                 ? 2 * static_cast<std::size_t>(sp)
                                 : static_cast<std::size_t>(sp);
  require_divisible("sequence", config.sequence, std::string("the ") +
                    std::string(to_string(SequenceAttention::layout_for(config.exchange()))) + " layout's shares",
                    shares);
  if (config.shard == AttentionShard::heads) {
    require_divisible("heads per tp rank", config.heads / static_cast<std::size_t>(tp), "sp (shard heads)",
                      static_cast<std::size_t>(sp));
  }
  if (config.attention == AttentionKind::sliding && config.window == 0) reject("window is 0; it must be at least 1");
  const std::set<std::string> allowed{"dp", "fsdp", "sp"};
  std::set<std::string> seen;
  for (const auto& axis : config.fsdp_axes) {
    if (!allowed.contains(axis)) {
      reject("fsdp axis '" + axis + "' is not one of dp, fsdp, sp (parameters differ across tp, so tp cannot shard them)");
    }
    if (!seen.insert(axis).second) reject("fsdp axis '" + axis + "' is given twice");
  }
  if (config.fsdp_axes.empty()) reject("fsdp axes are empty; give at least one of dp, fsdp, sp");
}

std::string_view to_string(AttentionKind kind) noexcept { return kind == AttentionKind::full ? "full" : "sliding"; }
std::string_view to_string(AttentionShard shard) noexcept {
  return shard == AttentionShard::sequence ? "sequence" : "heads";
}
std::string_view to_string(FullAttentionKv kv) noexcept { return kv == FullAttentionKv::ring ? "ring" : "all_gather"; }

namespace {

template <class Enum>
Enum parse_named(std::string_view what, std::string_view given, std::initializer_list<Enum> choices) {
  std::string valid;
  for (Enum choice : choices) {
    if (to_string(choice) == given) return choice;
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(choice));
  }
  throw Error(ErrorCode::invalid_argument,
              std::string(what) + " '" + std::string(given) + "' is not one of: " + valid);
}

}  // namespace

AttentionKind parse_attention_kind(std::string_view text) {
  return parse_named("attention", text, {AttentionKind::full, AttentionKind::sliding});
}
AttentionShard parse_attention_shard(std::string_view text) {
  return parse_named("shard", text, {AttentionShard::sequence, AttentionShard::heads});
}
FullAttentionKv parse_full_attention_kv(std::string_view text) {
  return parse_named("full-kv", text, {FullAttentionKv::ring, FullAttentionKv::all_gather});
}

}  // namespace meshcomm::layers
