#pragma once

// The four exchange strategies behind SequenceAttention::create, one file each.

#include <memory>

#include "attention/block_attention.hpp"
#include "attention/sequence_attention.hpp"

namespace meshcomm::layers::detail {

std::unique_ptr<SequenceAttention> make_ring_exchange(Communicator& sp, const SequenceAttentionSpec& spec);
std::unique_ptr<SequenceAttention> make_all_gather_kv_exchange(Communicator& sp, const SequenceAttentionSpec& spec);
std::unique_ptr<SequenceAttention> make_halo_exchange(Communicator& sp, const SequenceAttentionSpec& spec);
std::unique_ptr<SequenceAttention> make_head_all_to_all_exchange(Communicator& sp,
                                                                 const SequenceAttentionSpec& spec);

/// The block shape of `query_rows` queries against `key_rows` keys under `spec`'s causal window.
BlockShape block_shape(const SequenceAttentionSpec& spec, std::size_t query_rows, std::size_t key_rows);

}  // namespace meshcomm::layers::detail
