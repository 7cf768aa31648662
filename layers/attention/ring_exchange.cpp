// Full causal attention with K and V travelling the sp ring (RingAttention, zigzag layout).

#include <algorithm>

#include "attention/exchanges.hpp"
#include "attention/ring_attention.hpp"

namespace meshcomm::layers::detail {

namespace {

class RingExchange final : public SequenceAttention {
 public:
  // The ring is planned once: its pipelines and progress threads serve every layer call.
  RingExchange(Communicator& sp, const SequenceAttentionSpec& spec) : SequenceAttention(sp, spec), ring_(sp, shape()) {}

  void forward(const float* queries, const float* keys, const float* values, float* out,
               AttentionSaved& saved) override {
    saved.lse.resize(rows() * spec_.heads);
    ring_.forward(queries, keys, values, positions_.data(), out, saved.lse.data());
    traffic_.calls += 1;
    traffic_.bytes_sent += (ring_steps() - 1) * key_value_block_bytes();
  }

  void backward(const float* queries, const float* keys, const float* values, const float* out, const float* d_out,
                AttentionSaved& saved, float* d_queries, float* d_keys, float* d_values) override {
    ring_.backward(queries, keys, values, positions_.data(), out, saved.lse.data(), d_out, d_queries, d_keys,
                   d_values);
    // K and V go round once more, and each block's dK and dV make a full circle behind them.
    traffic_.bytes_sent += (ring_steps() - 1) * key_value_block_bytes() + ring_steps() * gradient_block_bytes();
  }

 private:
  [[nodiscard]] RingAttentionShape shape() const {
    return {.rows = rows(), .heads = spec_.heads, .head_dim = spec_.head_dim, .causal = true};
  }
  [[nodiscard]] std::size_t ring_steps() const { return static_cast<std::size_t>(sp_.size()); }
  [[nodiscard]] std::size_t gradient_block_bytes() const {
    return sp_.size() == 1 ? 0 : 2 * rows() * spec_.heads * spec_.head_dim * sizeof(float);
  }
  [[nodiscard]] std::size_t key_value_block_bytes() const {
    return rows() * sizeof(std::int64_t) + 2 * rows() * spec_.heads * spec_.head_dim * sizeof(float);
  }

  RingAttention<float> ring_;
};

}  // namespace

std::unique_ptr<SequenceAttention> make_ring_exchange(Communicator& sp, const SequenceAttentionSpec& spec) {
  return std::make_unique<RingExchange>(sp, spec);
}

}  // namespace meshcomm::layers::detail
