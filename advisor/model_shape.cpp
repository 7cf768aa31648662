#include "model_shape.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "meshcomm/error.hpp"

namespace meshcomm::advisor {

namespace {

[[noreturn]] void reject(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, "--model: " + message);
}

ModelShape llama_7b(std::string name, std::size_t sequence, std::size_t batch) {
  return {.name = std::move(name),
          .layers = 32,
          .width = 4096,
          .heads = 32,
          .kv_heads = 32,
          .hidden = 11008,
          .vocab = 32000,
          .sequence = sequence,
          .batch = batch,
          .element_bytes = 2,
          .window = 0};
}

std::size_t parse_count(std::string_view key, std::string_view value) {
  std::size_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc{} || end != value.data() + value.size()) {
    reject(fmt::format("{}={} is not a whole number", key, value));
  }
  return parsed;
}

std::size_t parse_dtype(std::string_view value) {
  if (value == "f32" || value == "fp32" || value == "float") return 4;
  if (value == "bf16" || value == "f16" || value == "fp16") return 2;
  reject(fmt::format("dtype={} is not one of f32, bf16, f16", value));
}

void set_field(ModelShape& shape, std::string_view key, std::string_view value) {
  if (key == "dtype") {
    shape.element_bytes = parse_dtype(value);
    return;
  }
  const std::size_t number = parse_count(key, value);
  if (key == "layers")
    shape.layers = number;
  else if (key == "width")
    shape.width = number;
  else if (key == "heads")
    shape.heads = number;
  else if (key == "kv-heads" || key == "kv_heads")
    shape.kv_heads = number;
  else if (key == "hidden")
    shape.hidden = number;
  else if (key == "vocab")
    shape.vocab = number;
  else if (key == "seq" || key == "sequence")
    shape.sequence = number;
  else if (key == "batch")
    shape.batch = number;
  else if (key == "window")
    shape.window = number;
  else
    reject(fmt::format(
        "'{}' is not a field; valid: layers, width, heads, kv-heads, hidden, vocab, seq, batch, dtype, window", key));
}

void check(const ModelShape& shape) {
  for (auto [key, value] : {std::pair{"layers", shape.layers},
                            {"width", shape.width},
                            {"heads", shape.heads},
                            {"kv-heads", shape.kv_heads},
                            {"hidden", shape.hidden},
                            {"seq", shape.sequence},
                            {"batch", shape.batch}}) {
    if (value == 0) reject(fmt::format("{}=0; it must be at least 1", key));
  }
  if (shape.width % shape.heads != 0) {
    reject(fmt::format("width {} is not divisible by heads {}", shape.width, shape.heads));
  }
  if (shape.kv_heads > shape.heads || shape.heads % shape.kv_heads != 0) {
    reject(fmt::format("kv-heads {} must divide heads {}", shape.kv_heads, shape.heads));
  }
  if (shape.window > shape.sequence) {
    reject(fmt::format("window {} is longer than the sequence {}; use full attention", shape.window, shape.sequence));
  }
}

}  // namespace

std::string ModelShape::dtype() const { return element_bytes == 4 ? "f32" : "bf16"; }

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = [] {
    ModelShape anemoi{.name = "anemoi-o96",
                      .layers = 16,
                      .width = 1024,
                      .heads = 16,
                      .kv_heads = 16,
                      .hidden = 4096,
                      .vocab = 0,
                      .sequence = 40320,
                      .batch = 1,
                      .element_bytes = 2,
                      .window = 512};
    return std::vector<ModelPreset>{
        {"lwm-7b-32k", "LLaMA-2 7B (LWM, EasyLM) at 32k tokens, 4M tokens per step, bf16",
         llama_7b("lwm-7b-32k", 32768, 128)},
        {"lwm-7b-128k", "LLaMA-2 7B (LWM) at 128k tokens, 4M tokens per step, bf16",
         llama_7b("lwm-7b-128k", 131072, 32)},
        {"lwm-7b-1m", "LLaMA-2 7B (LWM) at 1M tokens, 4M tokens per step, bf16", llama_7b("lwm-7b-1m", 1048576, 4)},
        {"easylm-7b", "LLaMA 7B (EasyLM) at 2k tokens, 2M tokens per step, bf16", llama_7b("easylm-7b", 2048, 1024)},
        {"anemoi-o96", "anemoi's transformer processor on the o96 grid (40320 points), window 512, bf16", anemoi},
    };
  }();
  return presets;
}

ModelShape parse_model(std::string_view text) {
  ModelShape shape;
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    start = comma + 1;
    if (part.empty()) continue;
    const std::size_t equals = part.find('=');
    if (equals == std::string_view::npos) {
      if (!first) reject(fmt::format("'{}' is not key=value (a preset name may only come first)", part));
      const auto& presets = model_presets();
      const auto found = std::find_if(presets.begin(), presets.end(), [&](const auto& p) { return p.name == part; });
      if (found == presets.end()) {
        std::vector<std::string> names;
        for (const auto& preset : presets) names.push_back(preset.name);
        reject(fmt::format("'{}' is not a preset; valid: {}, or key=value pairs", part, fmt::join(names, ", ")));
      }
      shape = found->shape;
    } else {
      set_field(shape, part.substr(0, equals), part.substr(equals + 1));
      if (first) shape.name = "custom";
    }
    first = false;
  }
  check(shape);
  return shape;
}

void apply_attention(ModelShape& shape, std::string_view text) {
  if (text == "full") {
    shape.window = 0;
    return;
  }
  if (text.starts_with("sliding:")) {
    shape.window = parse_count("--attention sliding", text.substr(8));
    if (shape.window == 0 || shape.window > shape.sequence) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--attention {}: the window must be 1 to the sequence length {}", text, shape.sequence));
    }
    return;
  }
  throw Error(ErrorCode::invalid_argument, fmt::format("--attention '{}' is not 'full' or 'sliding:W'", text));
}

std::string to_string(const ModelShape& shape) {
  return fmt::format("layers={},width={},heads={},kv-heads={},hidden={},vocab={},seq={},batch={},dtype={},window={}",
                     shape.layers, shape.width, shape.heads, shape.kv_heads, shape.hidden, shape.vocab, shape.sequence,
                     shape.batch, shape.dtype(), shape.window);
}

}  // namespace meshcomm::advisor
