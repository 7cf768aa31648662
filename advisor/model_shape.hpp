#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace meshcomm::advisor {

/// The transformer the advisor plans for: meshcomm's reference decoder (embedding, `layers`
/// blocks of RMSNorm → attention → RMSNorm → MLP, final norm, output projection), with grouped
/// K/V heads and a dtype beyond the reference's fp32. `vocab` 0 drops the embedding and output
/// (a processor such as anemoi's).
struct ModelShape {
  std::string name = "custom";
  std::size_t layers = 4;
  std::size_t width = 128;
  std::size_t heads = 4;
  std::size_t kv_heads = 4;  ///< heads of K and V (grouped-query attention when below `heads`)
  std::size_t hidden = 512;  ///< MLP width
  std::size_t vocab = 64;
  std::size_t sequence = 256;
  std::size_t batch = 4;          ///< sequences per step, global
  std::size_t element_bytes = 4;  ///< parameters, activations and messages: 4 f32, 2 bf16/f16
  std::size_t window = 0;         ///< causal sliding window (keys per query); 0: full causal attention

  [[nodiscard]] std::size_t head_dim() const { return width / heads; }
  [[nodiscard]] bool sliding() const { return window != 0; }
  /// "bf16", "f16" or "f32".
  [[nodiscard]] std::string dtype() const;
};

/// A named model the advisor knows, with where its figures come from.
struct ModelPreset {
  std::string name;
  std::string description;
  ModelShape shape;
};

/// The presets: LWM/EasyLM's LLaMA-7B at 32k, 128k and 1M tokens and at 2k, and anemoi's o96
/// processor (sliding-window attention over the grid).
const std::vector<ModelPreset>& model_presets();

/// Parses `--model`: a preset name, `key=value` pairs (layers, width, heads, kv-heads, hidden,
/// vocab, seq, batch, dtype, window), or a preset followed by overrides ("lwm-7b-128k,seq=262144").
/// Throws Error(invalid_argument) naming the key or value and listing what is valid; the shape
/// must be consistent (width divisible by heads, heads by kv-heads, nothing zero but vocab and window).
ModelShape parse_model(std::string_view text);

/// Sets the attention from `--attention full|sliding:W`; throws Error(invalid_argument) otherwise.
void apply_attention(ModelShape& shape, std::string_view text);

/// "layers=32,width=4096,..." — parseable by parse_model.
std::string to_string(const ModelShape& shape);

}  // namespace meshcomm::advisor
