#pragma once

#include <cstddef>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// Work on one rank in the units the compute speeds are calibrated in: a block's forward and
/// backward pass, a step's ends, or a whole step.
struct ComputeWork {
  double gemm_flops = 0;       ///< projections and MLP: 3× the forward's 2·m·n·k
  double attention_flops = 0;  ///< visible query-key pairs × heads × head_dim × 14 (4 forward, 10 backward)
  double attention_pairs = 0;  ///< visible query-key pairs × heads, forward and backward: exponentials and
                               ///< bookkeeping per pair, whatever the head_dim
  double attention_scans = 0;  ///< query-key pairs a dense kernel visits (masked ones too), forward and backward
  double activations = 0;      ///< elements through an exponential (SiLU's hidden activations, the loss's logits)
  double optimizer_bytes = 0;  ///< AdamW's reads and writes of the shards, their gradients and two moments
};

/// The rest of a step: the output projection and loss (every tp rank computes them whole) and AdamW.
struct EndsWork {
  double gemm_flops = 0;
  double activations = 0;      ///< the logits, through the loss's softmax
  double optimizer_bytes = 0;  ///< AdamW over the rank's shards
};

/// The block's work on the rank with the most (the halo's last rank sees the most keys).
ComputeWork block_work(const ModelShape& shape, const MeshChoice& choice);
EndsWork ends_work(const ModelShape& shape, const MeshChoice& choice);

}  // namespace meshcomm::advisor
