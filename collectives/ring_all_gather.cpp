#include "algorithm.hpp"
#include "algorithms.hpp"
#include "chunked_ring.hpp"
#include "internal_p2p.hpp"
#include "memory_ops.hpp"
#include "patterns/ring.hpp"
#include "recycled_allocation.hpp"
#include "ring_states.hpp"

namespace meshcomm::detail {

namespace {

class RingAllGatherState final : public ChunkedRingState {
 public:
  /// `own_input`: where this rank's block is read from for sending (null: from `data` itself).
  RingAllGatherState(CommunicatorImpl& comm, BufferView data, BlockList blocks, int chunks,
                     OperationLabel label, int first_tag, const void* own_input)
      : ChunkedRingState(comm, chunks, comm.size() - 1, label, "ring all_gather", first_tag),
        data_(static_cast<std::byte*>(data.data)),
        own_input_(static_cast<const std::byte*>(own_input)),
        element_bytes_(size_of(data.type)),
        memory_(data.memory),
        blocks_(std::move(blocks)) {}

 private:
  /// Byte range of chunk `chunk` of block `block`.
  std::pair<std::byte*, std::size_t> piece(int block, int chunk) const {
    const auto range = block_of(blocks_[block].count, chunks_, chunk);
    return {data_ + (blocks_[block].offset + range.offset) * element_bytes_, range.count * element_bytes_};
  }

  void post(int chunk, int step, int tag, WorkList& works) override {
    const int rank = comm_.rank();
    const int size = comm_.size();
    const int send_block = ring_all_gather_send_block(rank, size, step);
    const auto [block_data, send_bytes_count] = piece(send_block, chunk);
    const std::byte* send_data = block_data;
    if (send_block == rank && own_input_ != nullptr) {
      send_data = own_input_ + block_of(blocks_[rank].count, chunks_, chunk).offset * element_bytes_;
    }
    const auto [recv_data, recv_bytes_count] = piece(ring_all_gather_recv_block(rank, size, step), chunk);
    works.push_back(recv_bytes(comm_, recv_data, recv_bytes_count, ring_left(rank, size), tag, label_, memory_));
    works.push_back(send_bytes(comm_, send_data, send_bytes_count, ring_right(rank, size), tag, label_, memory_));
  }

  std::byte* data_;
  const std::byte* own_input_;
  std::size_t element_bytes_;
  MemoryKind memory_;
  BlockList blocks_;
};

class RingAllGather final : public AlgorithmOf<CollectiveKind::all_gather> {
 public:
  RingAllGather() : AlgorithmOf("ring") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    return start_ring_all_gather(comm, args);
  }
  int takeover_tags() const noexcept override { return ring_max_chunks(); }
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int first_tag) const override {
    return start_ring_all_gather(comm, args, first_tag);
  }
};

}  // namespace

BlockList equal_blocks(std::size_t count, int size) {
  BlockList blocks;
  blocks.reserve(static_cast<std::size_t>(size));
  for (int block = 0; block < size; ++block) blocks.push_back({block * count, count});
  return blocks;
}

BlockList nearly_equal_blocks(std::size_t total, int size) {
  BlockList blocks;
  blocks.reserve(static_cast<std::size_t>(size));
  for (int block = 0; block < size; ++block) blocks.push_back(block_of(total, size, block));
  return blocks;
}

namespace {

std::shared_ptr<WorkState> start_ring(CommunicatorImpl& comm, BufferView data, BlockList blocks,
                                      OperationLabel label, int first_tag, const void* own_input) {
  std::size_t largest = 0;
  for (const auto& block : blocks) largest = std::max(largest, block.count * size_of(data.type));
  // Chunks let a block travel on while its later chunks still arrive; with two ranks there is
  // one step and nothing to pass on, and each chunk would only add a rendezvous of its own.
  const int chunks = comm.size() == 2 ? 1 : ring_chunk_count(largest, data.memory);
  auto state = make_recycled<RingAllGatherState>(comm, data, std::move(blocks), chunks, label, first_tag,
                                               own_input);
  state->begin_steps();
  return state;
}

}  // namespace

std::shared_ptr<WorkState> start_ring_all_gather(CommunicatorImpl& comm, BufferView data, BlockList blocks,
                                                 OperationLabel label, int first_tag) {
  return start_ring(comm, data, std::move(blocks), label, first_tag, nullptr);
}

std::shared_ptr<WorkState> start_ring_all_gather(CommunicatorImpl& comm, const CollectiveArgs& args, int first_tag) {
  const std::size_t own_bytes = args.input.bytes();
  auto state = start_ring(comm, args.output, equal_blocks(args.input.count, comm.size()), args.label, first_tag,
                          args.in_place ? nullptr : args.input.data);
  // The first sends read the input itself, so this rank's block reaches the output while they
  // travel, and peers read lines that were not just written. The copy streams when the whole
  // output is too large to stay cached: the ring's receives write the rest of it.
  if (!args.in_place) {
    copy_bytes(byte_offset(args.output.data, comm.rank() * own_bytes), args.input.data, own_bytes,
               args.output.memory, args.output.bytes());
  }
  return state;
}

std::unique_ptr<Algorithm> make_ring_all_gather() { return std::make_unique<RingAllGather>(); }

}  // namespace meshcomm::detail
