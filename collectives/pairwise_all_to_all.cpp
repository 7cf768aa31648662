#include <algorithm>
#include <vector>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "memory_ops.hpp"
#include "patterns/pairwise.hpp"

namespace meshcomm::detail {

namespace {

/// Exchanges in flight at once: enough to keep the network busy, few enough not to flood it.
constexpr int kWindow = 8;

/// Byte ranges of one all-to-all: what goes to and comes from each peer.
struct ExchangePlan {
  std::vector<std::size_t> send_offset, send_bytes, recv_offset, recv_bytes;
};

/// Pairwise exchange: in step s a rank sends to rank+s and receives from rank-s, `kWindow`
/// steps at a time; its own block is a local copy.
std::shared_ptr<WorkState> start_pairwise(CommunicatorImpl& comm, const void* input, void* output, ExchangePlan plan,
                                          OperationLabel label, MemoryKind memory) {
  const int rank = comm.rank();
  const int size = comm.size();
  if (input != output) {
    // The copy streams where the whole output, which the receives write the rest of, is too
    // large to stay cached.
    std::size_t received_bytes = 0;
    for (const auto bytes : plan.recv_bytes) received_bytes += bytes;
    copy_bytes(byte_offset(output, plan.recv_offset[rank]), byte_offset(input, plan.send_offset[rank]),
               plan.send_bytes[rank], memory, received_bytes);
  }
  const int tag = comm.reserve_internal_tags(1);
  const int batches = (size - 1 + kWindow - 1) / kWindow;
  return std::make_shared<ScheduleWorkState>(batches, [&comm, input, output, plan = std::move(plan), rank, size, tag,
                                                       label, memory](int batch) {
    std::vector<Work> works;
    for (int step = 1 + batch * kWindow; step < size && step <= (batch + 1) * kWindow; ++step) {
      const int to = pairwise_send_peer(rank, size, step);
      const int from = pairwise_recv_peer(rank, size, step);
      works.push_back(recv_bytes(comm, byte_offset(output, plan.recv_offset[from]), plan.recv_bytes[from], from, tag,
                                 label, memory));
      works.push_back(
          send_bytes(comm, byte_offset(input, plan.send_offset[to]), plan.send_bytes[to], to, tag, label, memory));
    }
    return works;
  });
}

/// Swaps in flight at once in place; each holds one block of scratch.
constexpr int kSwapWindow = 1;

/// In place: in each round of a swap schedule two ranks trade their blocks for each other, each
/// sending its block from a one-block copy and receiving into the block itself, `kSwapWindow`
/// rounds at a time. Only the blocks in flight are held twice, where copying every block first
/// and sending from that copy touches twice the buffer (ucx, -np 4, 1-64 MiB: 1.15-3.2x faster in
/// place than that).
std::shared_ptr<WorkState> start_swaps(CommunicatorImpl& comm, void* data, std::size_t block, OperationLabel label,
                                       MemoryKind memory) {
  const int rank = comm.rank();
  const int size = comm.size();
  const int rounds = swap_rounds(size);
  const int batches = (rounds + kSwapWindow - 1) / kSwapWindow;
  auto outgoing = comm.scratch().acquire(std::min(rounds, kSwapWindow) * block, memory);
  const int tag = comm.reserve_internal_tags(1);
  return std::make_shared<ScheduleWorkState>(
      batches, [&comm, data, block, outgoing, rank, size, rounds, tag, label, memory](int batch) {
        std::vector<Work> works;
        for (int round = batch * kSwapWindow; round < rounds && round < (batch + 1) * kSwapWindow; ++round) {
          const int peer = swap_peer(rank, size, round);
          if (peer < 0) continue;
          std::byte* copy = outgoing.get() + static_cast<std::size_t>(round % kSwapWindow) * block;
          void* in_place = byte_offset(data, static_cast<std::size_t>(peer) * block);
          copy_bytes(copy, in_place, block, memory);
          works.push_back(send_bytes(comm, copy, block, peer, tag, label, memory));
          works.push_back(recv_bytes(comm, in_place, block, peer, tag, label, memory));
        }
        return works;
      });
}

class PairwiseAllToAll final : public AlgorithmOf<CollectiveKind::all_to_all> {
 public:
  PairwiseAllToAll() : AlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const int size = comm.size();
    const std::size_t block = args.input.bytes() / static_cast<std::size_t>(size);
    const MemoryKind memory = args.output.memory;
    if (args.in_place) return start_swaps(comm, args.output.data, block, args.label, memory);
    ExchangePlan plan;
    for (int peer = 0; peer < size; ++peer) {
      plan.send_offset.push_back(peer * block);
      plan.recv_offset.push_back(peer * block);
      plan.send_bytes.push_back(block);
      plan.recv_bytes.push_back(block);
    }
    return start_pairwise(comm, args.input.data, args.output.data, std::move(plan), args.label, memory);
  }
};

class PairwiseAllToAllv final : public AlgorithmOf<CollectiveKind::all_to_allv> {
 public:
  PairwiseAllToAllv() : AlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t element = size_of(args.input.type);
    ExchangePlan plan;
    for (int peer = 0; peer < comm.size(); ++peer) {
      plan.send_offset.push_back(args.layout.send_offsets[peer] * element);
      plan.send_bytes.push_back(args.layout.send_counts[peer] * element);
      plan.recv_offset.push_back(args.layout.recv_offsets[peer] * element);
      plan.recv_bytes.push_back(args.layout.recv_counts[peer] * element);
    }
    return start_pairwise(comm, args.input.data, args.output.data, std::move(plan), args.label, args.output.memory);
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_pairwise_all_to_all() { return std::make_unique<PairwiseAllToAll>(); }
std::unique_ptr<Algorithm> make_pairwise_all_to_allv() { return std::make_unique<PairwiseAllToAllv>(); }

}  // namespace meshcomm::detail
