// No halo at all: an all-to-all turns sequence sharding into head sharding (every rank holds the
// whole sequence for heads / P heads), attention runs locally, and a second all-to-all turns the
// output back (DeepSpeed-Ulysses). The backward pass transposes the gradients the same way.

#include <algorithm>
#include <limits>

#include "attention/block_attention.hpp"
#include "attention/exchanges.hpp"
#include "meshcomm/head_transpose.hpp"

namespace meshcomm::layers::detail {

namespace {

class HeadAllToAllExchange final : public SequenceAttention {
 public:
  HeadAllToAllExchange(Communicator& sp, const SequenceAttentionSpec& spec)
      : SequenceAttention(sp, spec),
        transpose_(HeadTranspose::create(
            sp, {.shard_rows = std::vector<std::size_t>(static_cast<std::size_t>(sp.size()), rows()),
                 .heads = spec.heads,
                 .head_dim = spec.head_dim})),
        head_spec_(spec) {
    head_spec_.heads = transpose_.local_heads();
  }

  void forward(const float* queries, const float* keys, const float* values, float* out,
               AttentionSaved& saved) override {
    saved.queries = to_heads(queries);
    saved.keys = to_heads(keys);
    saved.values = to_heads(values);
    const std::size_t all_rows = all_positions_.size();
    saved.out.assign(all_rows * head_row_elements(), 0.0F);
    saved.lse.assign(all_rows * head_spec_.heads, -std::numeric_limits<float>::infinity());
    block_attention_forward(saved.queries.data(), all_positions_.data(), saved.keys.data(), saved.values.data(),
                            all_positions_.data(), saved.out.data(), saved.lse.data(),
                            block_shape(head_spec_, all_rows, all_rows));
    transpose_.to_sequence(saved.out.data(), out).wait();
    traffic_.calls += 1;
    traffic_.bytes_sent += 4 * transpose_.bytes_sent();
  }

  void backward(const float*, const float*, const float*, const float*, const float* d_out, AttentionSaved& saved,
                float* d_queries, float* d_keys, float* d_values) override {
    const std::size_t all_rows = all_positions_.size();
    const auto head_d_out = to_heads(d_out);
    std::vector<float> delta(all_rows * head_spec_.heads);
    attention_delta(saved.out.data(), head_d_out.data(), delta.data(), all_rows, head_spec_.heads,
                    head_spec_.head_dim);
    std::vector<float> head_d_queries(saved.queries.size(), 0.0F);
    std::vector<float> head_d_keys(saved.keys.size(), 0.0F);
    std::vector<float> head_d_values(saved.values.size(), 0.0F);
    block_attention_backward(saved.queries.data(), all_positions_.data(), saved.keys.data(), saved.values.data(),
                             all_positions_.data(), saved.lse.data(), head_d_out.data(), delta.data(),
                             head_d_queries.data(), head_d_keys.data(), head_d_values.data(),
                             block_shape(head_spec_, all_rows, all_rows));
    transpose_.to_sequence(head_d_queries.data(), d_queries).wait();
    transpose_.to_sequence(head_d_keys.data(), d_keys).wait();
    transpose_.to_sequence(head_d_values.data(), d_values).wait();
    traffic_.bytes_sent += 4 * transpose_.bytes_sent();
  }

 private:
  [[nodiscard]] std::size_t head_row_elements() const { return head_spec_.heads * head_spec_.head_dim; }

  std::vector<float> to_heads(const float* sequence_sharded) {
    std::vector<float> head_sharded(all_positions_.size() * head_row_elements());
    transpose_.to_heads(sequence_sharded, head_sharded.data()).wait();
    return head_sharded;
  }

  HeadTranspose transpose_;
  SequenceAttentionSpec head_spec_;  ///< the spec with this rank's heads after the transpose
  std::vector<std::int64_t> all_positions_ = all_rank_positions(layout_for(spec_.exchange), spec_.sequence, sp_.size());
};

}  // namespace

std::unique_ptr<SequenceAttention> make_head_all_to_all_exchange(Communicator& sp,
                                                                 const SequenceAttentionSpec& spec) {
  return std::make_unique<HeadAllToAllExchange>(sp, spec);
}

}  // namespace meshcomm::layers::detail
