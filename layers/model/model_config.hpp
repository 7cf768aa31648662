#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attention/sequence_attention.hpp"

namespace meshcomm::layers {

/// Which keys a query attends to.
enum class AttentionKind : std::uint8_t {
  full,     ///< every earlier position (causal)
  sliding,  ///< the `window` positions ending at the query
};

/// How attention is split over the sp axis.
enum class AttentionShard : std::uint8_t {
  sequence,  ///< each rank keeps its rows: ring (full) or halo exchange (sliding)
  heads,     ///< all-to-all to head sharding and back (no halo)
};

/// How full attention over a sequence shard gets K and V.
enum class FullAttentionKv : std::uint8_t {
  ring,        ///< RingPipeline, overlapped with the blocks' compute
  all_gather,  ///< all-gather K and V, reduce-scatter their gradients
};

/// AdamW's hyper-parameters (decoupled weight decay, bias-corrected moments).
struct AdamWConfig {
  float learning_rate = 3e-3F;
  float beta1 = 0.9F;
  float beta2 = 0.95F;
  float eps = 1e-8F;
  float weight_decay = 0.01F;
};

/// A small decoder-only transformer: embedding, `layers` blocks of [RMSNorm → attention →
/// residual, RMSNorm → MLP (SiLU) → residual], final RMSNorm, output projection, cross-entropy.
struct ModelConfig {
  std::size_t layers = 4;
  std::size_t width = 128;
  std::size_t heads = 4;
  std::size_t hidden = 512;  ///< MLP width
  std::size_t vocab = 64;
  std::size_t sequence = 256;
  std::size_t batch = 4;  ///< sequences in the global batch
  AttentionKind attention = AttentionKind::full;
  std::size_t window = 64;  ///< sliding window (keys per query)
  AttentionShard shard = AttentionShard::sequence;
  FullAttentionKv full_kv = FullAttentionKv::ring;
  std::vector<std::string> fsdp_axes = {"dp", "fsdp"};  ///< the group each layer's parameters are sharded over
  bool prefetch = true;  ///< start each layer's all-gather while the previous layer computes
  AdamWConfig optimizer;
  std::uint64_t seed = 1234;
  float norm_eps = 1e-5F;

  [[nodiscard]] std::size_t head_dim() const { return width / heads; }
  /// The sp exchange these choices make.
  [[nodiscard]] AttentionExchange exchange() const;
  /// The causal window handed to attention (0: full).
  [[nodiscard]] std::size_t attention_window() const { return attention == AttentionKind::sliding ? window : 0; }
};

/// Throws Error(invalid_argument) naming the field, its value and what would be valid for any
/// inconsistency of the config alone or with the mesh sizes (tp, sp, dp × fsdp).
void validate(const ModelConfig& config, int tp, int sp, int data_ranks);

/// Names for command lines and reports; the parsers throw Error(invalid_argument) listing the valid names.
std::string_view to_string(AttentionKind kind) noexcept;
std::string_view to_string(AttentionShard shard) noexcept;
std::string_view to_string(FullAttentionKv kv) noexcept;
AttentionKind parse_attention_kind(std::string_view text);
AttentionShard parse_attention_shard(std::string_view text);
FullAttentionKv parse_full_attention_kv(std::string_view text);

}  // namespace meshcomm::layers
