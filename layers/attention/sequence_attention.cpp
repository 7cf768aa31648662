#include "attention/sequence_attention.hpp"

#include <string>

#include "attention/exchanges.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::layers {

std::string_view to_string(AttentionExchange exchange) noexcept {
  switch (exchange) {
    case AttentionExchange::ring: return "ring";
    case AttentionExchange::all_gather_kv: return "all_gather_kv";
    case AttentionExchange::halo: return "halo";
    case AttentionExchange::head_all_to_all: return "head_all_to_all";
  }
  return "unknown";
}

SequenceLayout SequenceAttention::layout_for(AttentionExchange exchange) noexcept {
  switch (exchange) {
    case AttentionExchange::ring:
    case AttentionExchange::all_gather_kv: return SequenceLayout::zigzag;
    case AttentionExchange::halo:
    case AttentionExchange::head_all_to_all: return SequenceLayout::contiguous;
  }
  return SequenceLayout::contiguous;
}

SequenceAttention::SequenceAttention(Communicator& sp, const SequenceAttentionSpec& spec)
    : sp_(sp), spec_(spec), positions_(layout_positions(layout_for(spec.exchange), spec.sequence, sp.size(), sp.rank())) {
  traffic_.own_rows = positions_.size();
}

std::unique_ptr<SequenceAttention> SequenceAttention::create(Communicator& sp, const SequenceAttentionSpec& spec) {
  if (spec.heads == 0 || spec.head_dim == 0) {
    throw Error(ErrorCode::invalid_argument, "SequenceAttention: heads " + std::to_string(spec.heads) +
                                                 " and head_dim " + std::to_string(spec.head_dim) +
                                                 " must both be at least 1");
  }
  switch (spec.exchange) {
    case AttentionExchange::ring:
      if (spec.window != 0) {
        throw Error(ErrorCode::invalid_argument,
                    "SequenceAttention: window " + std::to_string(spec.window) +
                        " with exchange 'ring'; the ring computes full causal attention (window 0); use 'halo' or "
                        "'head_all_to_all' for a sliding window");
      }
      return detail::make_ring_exchange(sp, spec);
    case AttentionExchange::all_gather_kv: return detail::make_all_gather_kv_exchange(sp, spec);
    case AttentionExchange::halo:
      if (spec.window == 0) {
        throw Error(ErrorCode::invalid_argument,
                    "SequenceAttention: exchange 'halo' needs a sliding window (window 0 was given); full attention "
                    "uses 'ring', 'all_gather_kv' or 'head_all_to_all'");
      }
      return detail::make_halo_exchange(sp, spec);
    case AttentionExchange::head_all_to_all: return detail::make_head_all_to_all_exchange(sp, spec);
  }
  throw Error(ErrorCode::invalid_argument, "SequenceAttention: unknown exchange");
}

namespace detail {

BlockShape block_shape(const SequenceAttentionSpec& spec, std::size_t query_rows, std::size_t key_rows) {
  return {.query_rows = query_rows,
          .key_rows = key_rows,
          .heads = spec.heads,
          .head_dim = spec.head_dim,
          .causal = true,
          .window = spec.window};
}

}  // namespace detail

}  // namespace meshcomm::layers
