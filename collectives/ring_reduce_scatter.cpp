#include "algorithm.hpp"
#include "algorithms.hpp"
#include "chunked_ring.hpp"
#include "internal_p2p.hpp"
#include "patterns/ring.hpp"
#include "memory_ops.hpp"
#include "recycled_allocation.hpp"
#include "ring_states.hpp"

namespace meshcomm::detail {

namespace {

/// Partial sums travel in two slots per chunk: step s receives into slot s%2 while the partial
/// of step s-1 leaves from the other.
class RingReduceScatterState final : public ChunkedRingState {
 public:
  RingReduceScatterState(CommunicatorImpl& comm, ConstBufferView input, void* output, BlockList blocks,
                         ReduceOp op, int chunks, OperationLabel label, int first_tag)
      : ChunkedRingState(comm, chunks, comm.size() - 1, label, "ring reduce_scatter", first_tag),
        input_(static_cast<const std::byte*>(input.data)),
        output_(static_cast<std::byte*>(output)),
        type_(input.type),
        element_bytes_(size_of(input.type)),
        op_(op),
        memory_(input.memory),
        blocks_(std::move(blocks)) {
    for (const auto& block : blocks_) slot_bytes_ = std::max(slot_bytes_, (block.count / chunks + 1) * element_bytes_);
    slots_ = comm.scratch().acquire(2 * static_cast<std::size_t>(chunks) * slot_bytes_, memory_);
  }

 private:
  Block chunk_range(int block, int chunk) const {
    const auto range = block_of(blocks_[block].count, chunks_, chunk);
    return {blocks_[block].offset + range.offset, range.count};
  }
  std::byte* slot(int chunk, int step) { return slots_.get() + (2 * chunk + step % 2) * slot_bytes_; }

  void post(int chunk, int step, int tag, WorkList& works) override {
    const int rank = comm_.rank();
    const int size = comm_.size();
    const auto outgoing = chunk_range(ring_reduce_scatter_send_block(rank, size, step), chunk);
    const auto incoming = chunk_range(ring_reduce_scatter_recv_block(rank, size, step), chunk);
    const void* send_from = step == 0 ? input_ + outgoing.offset * element_bytes_ : slot(chunk, step - 1);
    works.push_back(
        recv_bytes(comm_, slot(chunk, step), incoming.count * element_bytes_, ring_left(rank, size), tag, label_, memory_));
    works.push_back(send_bytes(comm_, send_from, outgoing.count * element_bytes_, ring_right(rank, size), tag, label_,
                               memory_));
  }

  void received(int chunk, int step) override {
    const int rank = comm_.rank();
    const auto incoming = chunk_range(ring_reduce_scatter_recv_block(rank, comm_.size(), step), chunk);
    const std::byte* own = input_ + incoming.offset * element_bytes_;
    if (step + 1 < steps_) {
      reduce_into(slot(chunk, step), own, incoming.count, type_, op_, memory_);
      return;
    }
    // The last step brings block `rank`: its result goes to the output.
    std::byte* out = output_ + (incoming.offset - blocks_[rank].offset) * element_bytes_;
    reduce_pair(out, slot(chunk, step), own, incoming.count, type_, op_, memory_);
  }

  void finish() override {
    if (op_ == ReduceOp::avg) divide_for_average(output_, blocks_[comm_.rank()].count, type_, comm_.size(), memory_);
  }

  const std::byte* input_;
  std::byte* output_;
  DataType type_;
  std::size_t element_bytes_;
  ReduceOp op_;
  MemoryKind memory_;
  BlockList blocks_;
  std::size_t slot_bytes_ = 0;
  std::shared_ptr<std::byte[]> slots_;
};

class RingReduceScatter final : public AlgorithmOf<CollectiveKind::reduce_scatter> {
 public:
  RingReduceScatter() : AlgorithmOf("ring") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    return start_on_tags(comm, args, -1);
  }
  int takeover_tags() const noexcept override { return ring_max_chunks(); }
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int first_tag) const override {
    return start_ring_reduce_scatter(comm, args.input, args.output.data, equal_blocks(args.output.count, comm.size()),
                                     args.op, args.label, first_tag);
  }
};

}  // namespace

std::shared_ptr<WorkState> start_ring_reduce_scatter(CommunicatorImpl& comm, ConstBufferView input, void* output,
                                                     BlockList blocks, ReduceOp op, OperationLabel label,
                                                     int first_tag) {
  if (comm.size() == 1) {
    const std::size_t bytes = blocks[0].count * size_of(input.type);
    if (output != input.data) copy_bytes(output, input.data, bytes, input.memory);
    return nullptr;
  }
  std::size_t largest = 0;
  for (const auto& block : blocks) largest = std::max(largest, block.count * size_of(input.type));
  auto state = make_recycled<RingReduceScatterState>(comm, input, output, std::move(blocks), op,
                                                   ring_chunk_count(largest, input.memory), label, first_tag);
  state->begin_steps();
  return state;
}

std::unique_ptr<Algorithm> make_ring_reduce_scatter() { return std::make_unique<RingReduceScatter>(); }

}  // namespace meshcomm::detail
