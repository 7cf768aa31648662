#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model_shape.hpp"

namespace meshcomm::advisor {

/// How attention gets the keys of a sequence sharded over sp (the layers' four exchanges).
enum class SequenceExchange : std::uint8_t {
  ring,             ///< full attention: K and V travel the sp ring, overlapped with the blocks (zigzag layout)
  all_gather_kv,    ///< full attention: all-gather K and V, reduce-scatter their gradients (zigzag layout)
  halo,             ///< sliding window: the window − 1 rows of K and V to the left
  head_all_to_all,  ///< all-to-all to head sharding and back (DeepSpeed-Ulysses)
};

/// "ring", "all_gather_kv", "halo", "head_all_to_all".
std::string_view to_string(SequenceExchange exchange) noexcept;
/// Throws Error(invalid_argument) naming the text and the valid names.
SequenceExchange parse_sequence_exchange(std::string_view text);
/// Every exchange, in the order above.
const std::vector<SequenceExchange>& all_sequence_exchanges();

/// One way to run the model: mesh sizes, the sp exchange, and whether sp joins the FSDP shard
/// group. dp replicates (its ranks sum gradient shards); fsdp (and sp when folded) shards the
/// parameters; tp splits heads and MLP columns; sp splits the sequence.
struct MeshChoice {
  int dp = 1, fsdp = 1, tp = 1, sp = 1;
  SequenceExchange exchange = SequenceExchange::ring;
  bool sp_in_shard = false;

  [[nodiscard]] int world() const { return dp * fsdp * tp * sp; }
  [[nodiscard]] int shard_ranks() const { return fsdp * (sp_in_shard ? sp : 1); }
  [[nodiscard]] int replica_ranks() const { return dp * (sp_in_shard ? 1 : sp); }
  [[nodiscard]] int data_ranks() const { return dp * fsdp; }
  /// "dp:1,fsdp:8,tp:8,sp:4" — a MeshSpec text.
  [[nodiscard]] std::string mesh_text() const;
  /// The FSDP shard axes: "fsdp" or "fsdp,sp".
  [[nodiscard]] std::string shard_axes() const;
  /// "dp1 fsdp8 tp8 sp4 ring +sp" — one line of the table.
  [[nodiscard]] std::string label() const;
};

/// What the user pins: axis sizes (`--fix tp=8`) and the exchanges allowed (`--sp-exchange`).
struct ChoiceConstraints {
  std::map<std::string, int> fixed;         ///< axis name → size
  std::vector<SequenceExchange> exchanges;  ///< empty: every exchange the attention allows
};

/// Parses "tp=8" or "tp=8,sp=4" into `constraints.fixed`; throws Error(invalid_argument) naming
/// the axis or size.
void add_fixed_axes(ChoiceConstraints& constraints, std::string_view text);

/// A choice left out, and why.
struct PrunedChoice {
  MeshChoice choice;
  std::string reason;
};

/// The candidates and the ones that cannot run.
struct ChoiceSet {
  std::vector<MeshChoice> feasible;
  std::vector<PrunedChoice> pruned;
};

/// Every factorisation dp·fsdp·tp·sp of `world` × each sp exchange the attention allows × sp in
/// the FSDP shard or not, split into those the layers can run and those they cannot (heads or
/// hidden not divisible by tp, heads per tp rank not divisible by sp for the head all-to-all,
/// the sequence not divisible by the layout's shares, batch below dp·fsdp). A size-1 sp keeps
/// one exchange and never joins the shard.
ChoiceSet enumerate_choices(int world, const ModelShape& shape, const ChoiceConstraints& constraints);

/// Why `choice` cannot run `shape`, or empty when it can.
std::string infeasibility(const ModelShape& shape, const MeshChoice& choice);

}  // namespace meshcomm::advisor
