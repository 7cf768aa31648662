#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "attention/sequence_attention.hpp"
#include "model/communication_volume.hpp"
#include "model/model_config.hpp"
#include "model/parameter_layout.hpp"

namespace meshcomm::layers {

/// The tensors of one block, in flat-parameter order.
enum BlockTensor : std::size_t { norm1, query, key, value, attention_out, norm2, mlp_in, mlp_out, block_tensors };

/// One block's parameters for this tp rank: the attention projections column-parallel (this
/// rank's heads), the output projection row-parallel; likewise the MLP's two matrices.
ParameterLayout block_layout(const ModelConfig& config, int tp, int tp_rank);

/// What a block needs besides its parameters.
struct BlockContext {
  const ModelConfig& config;
  const ParameterLayout& layout;
  Communicator& tp;
  SequenceAttention& attention;  ///< over sp, one sequence at a time
  std::size_t sequences = 1;     ///< sequences of the local batch; rows = sequences × attention.rows()
  CommunicationVolume* volume = nullptr;
  /// Called between the block's steps: moves prefetches and gradient reductions along on host
  /// backends, where a collective advances only when tested (may be empty).
  std::function<void()> progress;
};

/// What the forward pass keeps for the backward pass.
struct BlockActivations {
  std::vector<float> x, normed, inverse_rms;
  std::vector<float> queries, keys, values, attended;
  std::vector<float> mid, mid_normed, mid_inverse_rms;
  std::vector<float> hidden, activated;
  std::vector<AttentionSaved> attention;  ///< one per sequence
};

/// x_out = x1 + MLP(RMSNorm(x1)), x1 = x + Attention(RMSNorm(x)); rows × width, the residual
/// stream replicated over tp. All-reduces over tp after each row-parallel projection.
void block_forward(const BlockContext& context, const float* parameters, const float* x, float* x_out,
                   BlockActivations& saved);

/// Writes d_x and adds this rank's parameter gradients to `d_parameters`. All-reduces over tp the
/// input gradients of the column-parallel projections.
void block_backward(const BlockContext& context, const float* parameters, BlockActivations& saved,
                    const float* d_x_out, float* d_x, float* d_parameters);

}  // namespace meshcomm::layers
