#pragma once

#include <memory>
#include <vector>

#include "collective_args.hpp"
#include "communicator_impl.hpp"
#include "patterns/partition.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

/// A ring's blocks, one per rank: up to 16 ranks cost no malloc (recycled_allocation.hpp).
using BlockList = std::vector<Block, ShortListAllocator<Block, 16>>;

/// Ring all-gather in place over `data`: block `rank` (elements, per `blocks`) is this rank's;
/// afterwards every block holds its owner's data.
/// `first_tag`: the first of `ring_max_chunks()` tags reserved when the operation started, for a
/// ring started later from a schedule step (-1: reserve now, at the operation's start).
std::shared_ptr<WorkState> start_ring_all_gather(CommunicatorImpl& comm, BufferView data, BlockList blocks,
                                                 OperationLabel label, int first_tag = -1);

/// Ring all-gather of a collective call, in place or not. Out of place, the first sends read the
/// input itself and this rank's block is copied into the output once they are posted.
std::shared_ptr<WorkState> start_ring_all_gather(CommunicatorImpl& comm, const CollectiveArgs& args,
                                                 int first_tag = -1);

/// Ring reduce-scatter: reduces `input` (blocks per `blocks`) over all ranks and writes block
/// `rank` of the result to `output` (which may be that block of `input`).
/// `first_tag` as for start_ring_all_gather.
std::shared_ptr<WorkState> start_ring_reduce_scatter(CommunicatorImpl& comm, ConstBufferView input, void* output,
                                                     BlockList blocks, ReduceOp op, OperationLabel label,
                                                     int first_tag = -1);

/// `size` equal blocks of `count` elements.
BlockList equal_blocks(std::size_t count, int size);
/// `total` elements in `size` nearly equal blocks.
BlockList nearly_equal_blocks(std::size_t total, int size);

}  // namespace meshcomm::detail
