// Rabenseifner's all-reduce: a recursive-halving reduce-scatter, then a recursive-doubling
// all-gather, both on the output (out of place, the first round reads the input). It moves the
// ring's bytes in 2 log2(P) rounds instead of 2 (P - 1), so it leads where the ring's per-round
// latency still counts.

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "memory_ops.hpp"
#include "patterns/partition.hpp"
#include "patterns/recursive_doubling.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

namespace {

/// Any count (blocks differ by one element at most) on a power-of-two number of ranks. Every
/// block is reduced by one rank and copied to the others, so all ranks hold identical results.
class RabenseifnerAllReduce final : public OneTagAlgorithmOf<CollectiveKind::all_reduce> {
 public:
  RabenseifnerAllReduce() : OneTagAlgorithmOf("rabenseifner") {}

  std::string unsupported_reason(const CollectiveArgs&, const CommunicatorImpl& comm) const override {
    return needs_power_of_two_ranks(comm);
  }

  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    struct Context {
      std::shared_ptr<std::byte[]> incoming;
      Block pending;  // elements received into `incoming` that still have to be reduced
      bool pending_from_input = false;  // reduce them with the input's, into the output (out of place, round 0)
    };
    const int rank = comm.rank();
    const int size = comm.size();
    const int rounds = doubling_rounds(size);
    const std::size_t count = args.output.count;
    const std::size_t element = size_of(args.output.type);
    const MemoryKind memory = args.output.memory;
    // Out of place, the first round sends from the input and sums its kept half with the input's
    // into the output: the output is written once, where a copy of the whole input first wrote
    // it twice (np 4, 4 MiB: 9.1 ms against 6.4 in place before).
    if (rounds == 0 && !args.in_place) copy_bytes(args.output.data, args.input.data, args.output.bytes(), memory);
    auto context = make_recycled<Context>();
    // The first round receives the larger half: the leading blocks hold the extra elements.
    context->incoming = comm.scratch().acquire(blocks_of(count, size, 0, size / 2).count * element, memory);
    auto elements_into = [element](auto* data) {
      return [data, element](std::size_t elements) { return byte_offset(data, elements * element); };
    };
    auto at = elements_into(args.output.data);
    auto input_at = elements_into(args.input.data);
    // Steps 0..rounds-1 halve, rounds..2 rounds-1 double (one step when there is one rank).
    const int steps = rounds == 0 ? 1 : 2 * rounds;
    return make_schedule(steps, [&comm, args, context, rank, size, rounds, count, element, memory,
                                                  tag, at, input_at](int step) {
      const Block pending = context->pending;
      if (pending.count > 0) {
        const void* mine = context->pending_from_input ? input_at(pending.offset) : at(pending.offset);
        reduce_pair(at(pending.offset), mine, context->incoming.get(), pending.count, args.output.type, args.op,
                    memory);
      }
      context->pending = {};
      context->pending_from_input = false;
      WorkList works;
      if (step < rounds) {
        const auto round = halving_round(rank, size, step);
        const Block kept = blocks_of(count, size, round.kept_first, round.span);
        const Block given = blocks_of(count, size, round.given_first, round.span);
        works.push_back(
            recv_bytes(comm, context->incoming.get(), kept.count * element, round.peer, tag, args.label, memory));
        const bool from_input = step == 0 && !args.in_place;
        works.push_back(send_bytes(comm, from_input ? input_at(given.offset) : at(given.offset),
                                   given.count * element, round.peer, tag, args.label, memory));
        context->pending = kept;
        context->pending_from_input = from_input;
        return works;
      }
      const int round = step - rounds;
      if (round == 0 && args.op == ReduceOp::avg) {
        const Block mine = block_of(count, size, rank);
        divide_for_average(at(mine.offset), mine.count, args.output.type, size, memory);
      }
      if (round < rounds) {
        const int peer = doubling_peer(rank, round);
        const Block held = blocks_of(count, size, doubling_group_first(rank, round), 1 << round);
        const Block theirs = blocks_of(count, size, doubling_group_first(peer, round), 1 << round);
        works.push_back(recv_bytes(comm, at(theirs.offset), theirs.count * element, peer, tag, args.label, memory));
        works.push_back(send_bytes(comm, at(held.offset), held.count * element, peer, tag, args.label, memory));
      }
      return works;
    });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_rabenseifner_all_reduce() { return std::make_unique<RabenseifnerAllReduce>(); }

}  // namespace meshcomm::detail
