#pragma once

#include <cstddef>

#include "mesh_choice.hpp"
#include "model_shape.hpp"

namespace meshcomm::advisor {

/// The work of one block's forward and backward pass on one rank, in the units the compute
/// speeds are calibrated in.
struct BlockWork {
  double gemm_flops = 0;         ///< projections and MLP: 3× the forward's 2·m·n·k
  double attention_flops = 0;    ///< visible query-key pairs × heads × head_dim × 14 (4 forward, 10 backward)
  double attention_scans = 0;    ///< query-key pairs a dense kernel visits (masked ones too), forward and backward
  double elementwise_bytes = 0;  ///< the block's activations, which norms, SiLU and residuals stream through
};

/// The rest of a step: the output projection and loss (every tp rank computes them whole) and AdamW.
struct EndsWork {
  double gemm_flops = 0;
  double elementwise_bytes = 0;  ///< logits and the optimizer's shards
};

/// The block's work on the rank with the most (the halo's last rank sees the most keys).
BlockWork block_work(const ModelShape& shape, const MeshChoice& choice);
EndsWork ends_work(const ModelShape& shape, const MeshChoice& choice);

}  // namespace meshcomm::advisor
