#include "algorithm.hpp"
#include "algorithms.hpp"
#include "chunked_ring.hpp"
#include "internal_p2p.hpp"
#include "memory_ops.hpp"
#include "patterns/ring.hpp"
#include "ring_states.hpp"

namespace meshcomm::detail {

namespace {

class RingAllGatherState final : public ChunkedRingState {
 public:
  RingAllGatherState(CommunicatorImpl& comm, BufferView data, std::vector<Block> blocks, int chunks,
                     OperationLabel label, int first_tag)
      : ChunkedRingState(comm, chunks, comm.size() - 1, label, "ring all_gather", first_tag),
        data_(static_cast<std::byte*>(data.data)),
        element_bytes_(size_of(data.type)),
        memory_(data.memory),
        blocks_(std::move(blocks)) {}

 private:
  /// Byte range of chunk `chunk` of block `block`.
  std::pair<std::byte*, std::size_t> piece(int block, int chunk) const {
    const auto range = block_of(blocks_[block].count, chunks_, chunk);
    return {data_ + (blocks_[block].offset + range.offset) * element_bytes_, range.count * element_bytes_};
  }

  void post(int chunk, int step, int tag, std::vector<Work>& works) override {
    const int rank = comm_.rank();
    const int size = comm_.size();
    const auto [send_data, send_bytes_count] = piece(ring_all_gather_send_block(rank, size, step), chunk);
    const auto [recv_data, recv_bytes_count] = piece(ring_all_gather_recv_block(rank, size, step), chunk);
    works.push_back(recv_bytes(comm_, recv_data, recv_bytes_count, ring_left(rank, size), tag, label_, memory_));
    works.push_back(send_bytes(comm_, send_data, send_bytes_count, ring_right(rank, size), tag, label_, memory_));
  }

  std::byte* data_;
  std::size_t element_bytes_;
  MemoryKind memory_;
  std::vector<Block> blocks_;
};

class RingAllGather final : public AlgorithmOf<CollectiveKind::all_gather> {
 public:
  RingAllGather() : AlgorithmOf("ring") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t count = args.input.count;
    if (!args.in_place) {
      copy_bytes(byte_offset(args.output.data, comm.rank() * args.input.bytes()), args.input.data,
                 args.input.bytes(), args.output.memory);
    }
    return start_ring_all_gather(comm, args.output, equal_blocks(count, comm.size()), args.label);
  }
};

}  // namespace

std::vector<Block> equal_blocks(std::size_t count, int size) {
  std::vector<Block> blocks;
  for (int block = 0; block < size; ++block) blocks.push_back({block * count, count});
  return blocks;
}

std::vector<Block> nearly_equal_blocks(std::size_t total, int size) {
  std::vector<Block> blocks;
  for (int block = 0; block < size; ++block) blocks.push_back(block_of(total, size, block));
  return blocks;
}

std::shared_ptr<WorkState> start_ring_all_gather(CommunicatorImpl& comm, BufferView data, std::vector<Block> blocks,
                                                 OperationLabel label, int first_tag) {
  std::size_t largest = 0;
  for (const auto& block : blocks) largest = std::max(largest, block.count * size_of(data.type));
  auto state =
      std::make_shared<RingAllGatherState>(comm, data, std::move(blocks), ring_chunk_count(largest), label, first_tag);
  state->begin_steps();
  return state;
}

std::unique_ptr<Algorithm> make_ring_all_gather() { return std::make_unique<RingAllGather>(); }

}  // namespace meshcomm::detail
