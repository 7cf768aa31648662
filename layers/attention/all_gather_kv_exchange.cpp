// Every rank gathers the whole sequence's K and V, attends with its own queries, and sends the
// key and value gradients home by reduce-scatter: the simple alternative to the ring.

#include <algorithm>
#include <limits>

#include "attention/block_attention.hpp"
#include "attention/exchanges.hpp"

namespace meshcomm::layers::detail {

namespace {

class AllGatherKvExchange final : public SequenceAttention {
 public:
  AllGatherKvExchange(Communicator& sp, const SequenceAttentionSpec& spec) : SequenceAttention(sp, spec) {
  }

  void forward(const float* queries, const float* keys, const float* values, float* out,
               AttentionSaved& saved) override {
    const std::size_t own = rows() * row_elements();
    saved.keys.resize(own * static_cast<std::size_t>(sp_.size()));
    saved.values.resize(saved.keys.size());
    auto gather_keys = sp_.all_gather(ConstBufferView(keys, own, DataType::f32), BufferView(saved.keys));
    auto gather_values = sp_.all_gather(ConstBufferView(values, own, DataType::f32), BufferView(saved.values));
    gather_keys.wait();
    gather_values.wait();
    saved.lse.assign(rows() * spec_.heads, -std::numeric_limits<float>::infinity());
    std::fill(out, out + own, 0.0F);
    block_attention_forward(queries, positions_.data(), saved.keys.data(), saved.values.data(),
                            all_positions_.data(), out, saved.lse.data(),
                            block_shape(spec_, rows(), all_positions_.size()));
    traffic_.calls += 1;
    traffic_.bytes_sent += 2 * own * sizeof(float) * static_cast<std::size_t>(sp_.size() - 1);
  }

  void backward(const float* queries, const float*, const float*, const float* out, const float* d_out,
                AttentionSaved& saved, float* d_queries, float* d_keys, float* d_values) override {
    const std::size_t own = rows() * row_elements();
    std::vector<float> delta(rows() * spec_.heads);
    attention_delta(out, d_out, delta.data(), rows(), spec_.heads, spec_.head_dim);
    std::vector<float> all_d_keys(saved.keys.size(), 0.0F);
    std::vector<float> all_d_values(saved.values.size(), 0.0F);
    std::fill(d_queries, d_queries + own, 0.0F);
    block_attention_backward(queries, positions_.data(), saved.keys.data(), saved.values.data(),
                             all_positions_.data(), saved.lse.data(), d_out, delta.data(), d_queries,
                             all_d_keys.data(), all_d_values.data(), block_shape(spec_, rows(), all_positions_.size()));
    auto send_keys = sp_.reduce_scatter(ConstBufferView(all_d_keys), BufferView(d_keys, own, DataType::f32));
    auto send_values = sp_.reduce_scatter(ConstBufferView(all_d_values), BufferView(d_values, own, DataType::f32));
    send_keys.wait();
    send_values.wait();
    traffic_.bytes_sent += 2 * own * sizeof(float) * static_cast<std::size_t>(sp_.size() - 1);
  }

 private:
  [[nodiscard]] std::size_t row_elements() const { return spec_.heads * spec_.head_dim; }

  std::vector<std::int64_t> all_positions_ = all_rank_positions(layout_for(spec_.exchange), spec_.sequence, sp_.size());
};

}  // namespace

std::unique_ptr<SequenceAttention> make_all_gather_kv_exchange(Communicator& sp, const SequenceAttentionSpec& spec) {
  return std::make_unique<AllGatherKvExchange>(sp, spec);
}

}  // namespace meshcomm::layers::detail
