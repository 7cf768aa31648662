// Latency-optimal algorithms for small messages: log2(P) rounds of pairwise exchanges.

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "patterns/recursive_doubling.hpp"
#include "memory_ops.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

std::string needs_power_of_two_ranks(const CommunicatorImpl& comm) {
  if (is_power_of_two(comm.size())) return {};
  return fmt::format("it needs a power-of-two number of ranks, not {}", comm.size());
}

namespace {

/// In place, from this size the all-reduce's first exchange sends a copy of this rank's data.
constexpr std::size_t kSendAsideFromBytes = std::size_t{8} << 10;

/// All-reduce: ranks beyond the largest power of two first fold their data into a partner, the
/// power-of-two ranks exchange whole vectors for log2 rounds, then the partners get the result.
class RecursiveDoublingAllReduce final : public OneTagAlgorithmOf<CollectiveKind::all_reduce> {
 public:
  RecursiveDoublingAllReduce() : OneTagAlgorithmOf("recursive_doubling") {}

  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    struct Context {
      std::shared_ptr<std::byte[]> incoming;
      std::shared_ptr<std::byte[]> aside;  // in place, what the first exchange sends
      int pending_peer = -1;
      bool output_holds_data = false;  // out of place, the input is this rank's data until the first reduction
    };
    const int rank = comm.rank();
    const int size = comm.size();
    const int group = power_of_two_floor(size);
    const int rounds = doubling_rounds(group);
    const std::size_t bytes = args.output.bytes();
    const MemoryKind memory = args.output.memory;
    // Out of place, the first exchange sends the input and the first reduction writes the output:
    // no copy of the input ahead of the first send.
    if (size == 1 && !args.in_place) copy_bytes(args.output.data, args.input.data, bytes, memory);
    auto context = make_recycled<Context>();
    context->output_holds_data = args.in_place || size == 1;
    context->incoming = comm.scratch().acquire(bytes, memory);
    // In place, the peer of the first exchange would read the lines this rank's reduction then
    // writes, which the call before wrote too; it reads a copy instead. On the AMD EPYC VM of
    // perftests/HISTORY.md (2026-11-30, sixteen alternated launches of `all_reduce_perf --algo
    // ring,recursive_doubling -b 16K -e 2M -f 4` at two ranks, in place, time over the ring's in
    // the same launch): at 16-64 KiB 0.57-0.83x with the copy, 0.62-1.07x without; from 256 KiB
    // 0.68-1.11x against 1.15-1.27x where the two cores are far apart, but 1.12-1.64x against
    // 0.96-1.12x where they are near (selection.cpp leaves those sizes in place to the ring).
    // Below 8 KiB, which Open MPI's shared-memory transport sends through its own buffers, the
    // copy is only a cost (1.5 against 1.9 us at 1 KiB).
    if (args.in_place && group > 1 && bytes >= kSendAsideFromBytes) {
      context->aside = comm.scratch().acquire(bytes, memory);
    }
    // Steps: 0 fold-in, 1..rounds exchanges, rounds+1 fold-out, rounds+2 finish.
    return make_schedule(rounds + 3, [&comm, args, context, rank, size, group, rounds, bytes,
                                                        memory, tag](int step) {
      // This rank's data so far: the input until the first reduction has written the output.
      const void* mine = context->output_holds_data ? static_cast<const void*>(args.output.data) : args.input.data;
      auto reduce_pending = [&] {
        if (context->pending_peer < 0) return;
        // Combine in rank order, so that partners compute bit-identical results.
        const void* theirs = context->incoming.get();
        const bool theirs_first = context->pending_peer < rank;
        reduce_pair(args.output.data, theirs_first ? theirs : mine, theirs_first ? mine : theirs, args.output.count,
                    args.output.type, args.op, memory);
        context->pending_peer = -1;
        context->output_holds_data = true;
        mine = args.output.data;
      };
      reduce_pending();
      WorkList works;
      const bool extra = rank >= group;
      const bool has_extra_partner = rank + group < size;
      if (step == 0) {
        if (extra) works.push_back(send_bytes(comm, mine, bytes, rank - group, tag, args.label, memory));
        if (has_extra_partner) {
          works.push_back(recv_bytes(comm, context->incoming.get(), bytes, rank + group, tag, args.label, memory));
          context->pending_peer = rank + group;
        }
      } else if (step <= rounds) {
        if (!extra) {
          const int peer = doubling_peer(rank, step - 1);
          works.push_back(recv_bytes(comm, context->incoming.get(), bytes, peer, tag, args.label, memory));
          const void* sent = mine;
          if (step == 1 && context->aside) {
            copy_aside_to_send(context->aside.get(), mine, bytes, memory);
            sent = context->aside.get();
          }
          works.push_back(send_bytes(comm, sent, bytes, peer, tag, args.label, memory));
          context->pending_peer = peer;
        }
      } else if (step == rounds + 1) {
        if (!extra && args.op == ReduceOp::avg) {
          divide_for_average(args.output.data, args.output.count, args.output.type, size, memory);
        }
        if (has_extra_partner) works.push_back(send_bytes(comm, args.output.data, bytes, rank + group, tag, args.label, memory));
        if (extra) works.push_back(recv_bytes(comm, args.output.data, bytes, rank - group, tag, args.label, memory));
      }
      return works;
    });
  }
};

/// All-gather: in round k each rank swaps the 2^k blocks it holds with its partner's.
class RecursiveDoublingAllGather final : public AlgorithmOf<CollectiveKind::all_gather> {
 public:
  RecursiveDoublingAllGather() : AlgorithmOf("recursive_doubling") {}
  std::string unsupported_reason(const CollectiveArgs&, const CommunicatorImpl& comm) const override {
    return needs_power_of_two_ranks(comm);
  }
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const int rank = comm.rank();
    const std::size_t block_bytes = args.input.bytes();
    const int tag = comm.reserve_internal_tags(1);
    const int rounds = doubling_rounds(comm.size());
    if (rounds == 0 && !args.in_place) copy_bytes(args.output.data, args.input.data, block_bytes, args.output.memory);
    return make_schedule(rounds, [&comm, args, rank, block_bytes, tag](int round) {
      const int peer = doubling_peer(rank, round);
      const std::size_t bytes = (std::size_t{1} << round) * block_bytes;
      // Out of place, the first round sends this rank's block from the input, and the block is
      // copied into the output while that exchange travels (later rounds send it from there).
      const bool send_from_input = round == 0 && !args.in_place;
      const void* sent = send_from_input
                             ? args.input.data
                             : byte_offset(args.output.data, doubling_group_first(rank, round) * block_bytes);
      WorkList works;
      works.reserve(2);
      works.push_back(recv_bytes(comm, byte_offset(args.output.data, doubling_group_first(peer, round) * block_bytes),
                                 bytes, peer, tag, args.label, args.output.memory));
      works.push_back(send_bytes(comm, sent, bytes, peer, tag, args.label, args.output.memory));
      if (send_from_input) {
        copy_bytes(byte_offset(args.output.data, rank * block_bytes), args.input.data, block_bytes,
                   args.output.memory, args.output.bytes());
      }
      return works;
    });
  }
};

/// Reduce-scatter: in each round a rank keeps the half of its range that holds its block, sends
/// the other half to its partner and reduces the partner's copy of its own half.
class RecursiveHalvingReduceScatter final : public OneTagAlgorithmOf<CollectiveKind::reduce_scatter> {
 public:
  RecursiveHalvingReduceScatter() : OneTagAlgorithmOf("recursive_halving") {}
  std::string unsupported_reason(const CollectiveArgs&, const CommunicatorImpl& comm) const override {
    return needs_power_of_two_ranks(comm);
  }
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    struct Context {
      std::shared_ptr<std::byte[]> accumulated;
      std::shared_ptr<std::byte[]> incoming;
      std::size_t pending_offset = 0;  // blocks
      std::size_t pending_blocks = 0;
      bool reduced = false;  // the rank's range is in `accumulated` (before the first reduction: the input)
    };
    const int rank = comm.rank();
    const int size = comm.size();
    const std::size_t count = args.output.count;
    const std::size_t block_bytes = args.output.bytes();
    const MemoryKind memory = args.output.memory;
    const int rounds = doubling_rounds(size);
    auto context = make_recycled<Context>();
    // The first round sends from the input and its reduction reads the input; the last one writes
    // the output: the input is never copied whole, nor the result copied out.
    if (rounds > 1) context->accumulated = comm.scratch().acquire(block_bytes * size, memory);
    if (rounds > 0) context->incoming = comm.scratch().acquire(block_bytes * size / 2, memory);
    return make_schedule(rounds + 1, [&comm, args, context, rank, size, count, block_bytes,
                                                       rounds, memory, tag](int step) {
      const auto* input = static_cast<const std::byte*>(args.input.data);
      auto range_at = [&](std::size_t block) -> const std::byte* {
        return (context->reduced ? context->accumulated.get() : input) + block * block_bytes;
      };
      if (context->pending_blocks > 0) {
        void* destination = step == rounds ? args.output.data
                                           : context->accumulated.get() + context->pending_offset * block_bytes;
        reduce_pair(destination, range_at(context->pending_offset), context->incoming.get(),
                    context->pending_blocks * count, args.output.type, args.op, memory);
        context->pending_blocks = 0;
        context->reduced = true;
      }
      WorkList works;
      if (step == rounds) {
        if (rounds == 0 && args.output.data != args.input.data) {
          copy_bytes(args.output.data, args.input.data, block_bytes, memory);
        }
        if (args.op == ReduceOp::avg) divide_for_average(args.output.data, count, args.output.type, size, memory);
        return works;
      }
      const auto round = halving_round(rank, size, step);
      const std::size_t bytes = static_cast<std::size_t>(round.span) * block_bytes;
      works.push_back(recv_bytes(comm, context->incoming.get(), bytes, round.peer, tag, args.label, memory));
      works.push_back(send_bytes(comm, range_at(static_cast<std::size_t>(round.given_first)), bytes, round.peer, tag,
                                 args.label, memory));
      context->pending_offset = static_cast<std::size_t>(round.kept_first);
      context->pending_blocks = static_cast<std::size_t>(round.span);
      return works;
    });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_recursive_doubling_all_reduce() {
  return std::make_unique<RecursiveDoublingAllReduce>();
}
std::unique_ptr<Algorithm> make_recursive_doubling_all_gather() {
  return std::make_unique<RecursiveDoublingAllGather>();
}
std::unique_ptr<Algorithm> make_recursive_halving_reduce_scatter() {
  return std::make_unique<RecursiveHalvingReduceScatter>();
}

}  // namespace meshcomm::detail
