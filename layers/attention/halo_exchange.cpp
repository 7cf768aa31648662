// Sliding-window attention over a contiguous shard: K and V of the window − 1 rows to the left
// arrive by halo exchange (one HaloPlan, K and V packed per row), and their gradients go back by
// the plan's adjoint. Projections are never recomputed: the halo carries K and V themselves.

#include <algorithm>
#include <limits>

#include "attention/block_attention.hpp"
#include "attention/exchanges.hpp"
#include "meshcomm/halo.hpp"

namespace meshcomm::layers::detail {

namespace {

class HaloExchange final : public SequenceAttention {
 public:
  HaloExchange(Communicator& sp, const SequenceAttentionSpec& spec)
      : SequenceAttention(sp, spec),
        plan_(HaloPlan::create(sp, {.shard_rows = std::vector<std::size_t>(static_cast<std::size_t>(sp.size()), rows()),
                                    .left = static_cast<std::int64_t>(spec.window - 1),
                                    .row_elements = 2 * row_elements()})) {
    // Halo rows before position 0 do not exist: attention skips them.
    const auto left = static_cast<std::int64_t>(spec.window - 1);
    const std::int64_t first = positions_.empty() ? 0 : positions_.front();
    skipped_rows_ = static_cast<std::size_t>(std::max<std::int64_t>(0, left - first));
    for (std::size_t row = skipped_rows_; row < plan_.extended_rows(); ++row) {
      key_positions_.push_back(first - left + static_cast<std::int64_t>(row));
    }
    traffic_.extra_key_rows = key_positions_.size() - rows();
  }

  void forward(const float* queries, const float* keys, const float* values, float* out,
               AttentionSaved& saved) override {
    std::vector<float> extended(plan_.extended_rows() * 2 * row_elements());
    pack_rows(keys, values, extended.data() + plan_.own_first_row() * 2 * row_elements(), rows());
    plan_.start(extended.data()).wait();
    const std::size_t key_rows = key_positions_.size();
    saved.keys.resize(key_rows * row_elements());
    saved.values.resize(key_rows * row_elements());
    unpack_rows(extended.data() + skipped_rows_ * 2 * row_elements(), saved.keys.data(), saved.values.data(),
                key_rows);
    saved.lse.assign(rows() * spec_.heads, -std::numeric_limits<float>::infinity());
    std::fill(out, out + rows() * row_elements(), 0.0F);
    block_attention_forward(queries, positions_.data(), saved.keys.data(), saved.values.data(),
                            key_positions_.data(), out, saved.lse.data(), block_shape(spec_, rows(), key_rows));
    traffic_.calls += 1;
    traffic_.bytes_sent += plan_.bytes_sent();
  }

  void backward(const float* queries, const float*, const float*, const float* out, const float* d_out,
                AttentionSaved& saved, float* d_queries, float* d_keys, float* d_values) override {
    const std::size_t key_rows = key_positions_.size();
    std::vector<float> delta(rows() * spec_.heads);
    attention_delta(out, d_out, delta.data(), rows(), spec_.heads, spec_.head_dim);
    std::vector<float> extended_d_keys(key_rows * row_elements(), 0.0F);
    std::vector<float> extended_d_values(key_rows * row_elements(), 0.0F);
    std::fill(d_queries, d_queries + rows() * row_elements(), 0.0F);
    block_attention_backward(queries, positions_.data(), saved.keys.data(), saved.values.data(),
                             key_positions_.data(), saved.lse.data(), d_out, delta.data(), d_queries,
                             extended_d_keys.data(), extended_d_values.data(), block_shape(spec_, rows(), key_rows));
    std::vector<float> extended(plan_.extended_rows() * 2 * row_elements(), 0.0F);
    pack_rows(extended_d_keys.data(), extended_d_values.data(),
              extended.data() + skipped_rows_ * 2 * row_elements(), key_rows);
    plan_.start_adjoint(extended.data()).wait();  // halo gradients added to their owners' rows
    unpack_rows(extended.data() + plan_.own_first_row() * 2 * row_elements(), d_keys, d_values, rows());
    traffic_.bytes_sent += plan_.bytes_sent();
  }

 private:
  [[nodiscard]] std::size_t row_elements() const { return spec_.heads * spec_.head_dim; }

  /// [K row | V row] per row, the halo plan's row format.
  void pack_rows(const float* keys, const float* values, float* packed, std::size_t count) const {
    const std::size_t width = row_elements();
    for (std::size_t row = 0; row < count; ++row) {
      std::copy_n(keys + row * width, width, packed + row * 2 * width);
      std::copy_n(values + row * width, width, packed + row * 2 * width + width);
    }
  }
  void unpack_rows(const float* packed, float* keys, float* values, std::size_t count) const {
    const std::size_t width = row_elements();
    for (std::size_t row = 0; row < count; ++row) {
      std::copy_n(packed + row * 2 * width, width, keys + row * width);
      std::copy_n(packed + row * 2 * width + width, width, values + row * width);
    }
  }

  HaloPlan plan_;
  std::size_t skipped_rows_ = 0;
  std::vector<std::int64_t> key_positions_;
};

}  // namespace

std::unique_ptr<SequenceAttention> make_halo_exchange(Communicator& sp, const SequenceAttentionSpec& spec) {
  return std::make_unique<HaloExchange>(sp, spec);
}

}  // namespace meshcomm::layers::detail
