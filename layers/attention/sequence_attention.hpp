#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "attention/sequence_layout.hpp"
#include "meshcomm/communicator.hpp"

namespace meshcomm::layers {

/// How causal attention over a sequence sharded on the sp axis gets the keys it needs.
enum class AttentionExchange : std::uint8_t {
  ring,             ///< full attention: K and V travel the ring (RingPipeline), zigzag layout
  all_gather_kv,    ///< full or sliding: every rank gathers all of K and V, zigzag layout
  halo,             ///< sliding window: the window − 1 rows of K and V to the left (HaloPlan)
  head_all_to_all,  ///< full or sliding: all-to-all to head sharding and back (HeadTranspose)
};

/// "ring", "all_gather_kv", "halo", "head_all_to_all".
std::string_view to_string(AttentionExchange exchange) noexcept;

/// One sequence's attention as this rank sees it. Tensors are [rows, heads, head_dim] fp32.
struct SequenceAttentionSpec {
  std::size_t sequence = 0;  ///< rows of the whole sequence
  std::size_t heads = 1;     ///< heads this rank holds (its tensor-parallel share)
  std::size_t head_dim = 1;
  std::size_t window = 0;  ///< causal sliding window (a query sees `window` keys); 0: full causal
  AttentionExchange exchange = AttentionExchange::ring;
};

/// What one forward call keeps for its backward call.
struct AttentionSaved {
  std::vector<float> lse;
  std::vector<float> queries, keys, values, out;  ///< as the strategy's compute saw them
  std::vector<std::int64_t> key_positions;
};

/// Traffic and halo overhead counted since creation.
struct AttentionTraffic {
  std::size_t bytes_sent = 0;  ///< bytes this rank sent (forward and backward)
  std::size_t calls = 0;       ///< forward calls
  std::size_t own_rows = 0;    ///< rows of this rank's shard
  std::size_t extra_key_rows = 0;  ///< key rows beyond its own that it attends over per call (halo)
};

/// Causal attention over a sequence sharded across `sp`, forward and backward, by one exchange
/// strategy. Create once per shape (collective over sp), call once per sequence.
class SequenceAttention {
 public:
  /// Collective over `sp`. Throws Error(invalid_argument) naming the value when the sequence does
  /// not divide by the layout's share (P, or 2P for zigzag), the heads do not divide by P for the
  /// head all-to-all, a halo is asked without a window, or the ring with one.
  static std::unique_ptr<SequenceAttention> create(Communicator& sp, const SequenceAttentionSpec& spec);

  virtual ~SequenceAttention() = default;

  /// The layout the strategy needs: which global rows this rank holds.
  [[nodiscard]] static SequenceLayout layout_for(AttentionExchange exchange) noexcept;
  /// Global positions of this rank's rows, in local order.
  [[nodiscard]] std::span<const std::int64_t> positions() const noexcept { return positions_; }
  /// Rows this rank holds.
  [[nodiscard]] std::size_t rows() const noexcept { return positions_.size(); }
  [[nodiscard]] const AttentionTraffic& traffic() const noexcept { return traffic_; }

  /// out = softmax(QKᵀ/√d) V over the visible keys; keeps what backward needs in `saved`.
  virtual void forward(const float* queries, const float* keys, const float* values, float* out,
                       AttentionSaved& saved) = 0;
  /// Writes d_queries, d_keys, d_values of this rank's rows (gradients of rows that other ranks
  /// used have come home).
  virtual void backward(const float* queries, const float* keys, const float* values, const float* out,
                        const float* d_out, AttentionSaved& saved, float* d_queries, float* d_keys,
                        float* d_values) = 0;

 protected:
  SequenceAttention(Communicator& sp, const SequenceAttentionSpec& spec);

  Communicator& sp_;
  SequenceAttentionSpec spec_;
  std::vector<std::int64_t> positions_;
  AttentionTraffic traffic_;
};

}  // namespace meshcomm::layers
