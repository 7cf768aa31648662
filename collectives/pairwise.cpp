// Pairwise exchanges: every rank sends straight to every other, a window of peers at a time
// (all-to-all, all-to-allv, all-gather, reduce-scatter, and all-reduce as the last two).

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "memory_ops.hpp"
#include "patterns/pairwise.hpp"
#include "patterns/partition.hpp"
#include "recycled_allocation.hpp"
#include "reduction.hpp"

namespace meshcomm::detail {

namespace {

/// Exchanges in flight at once: enough to keep the network busy, few enough not to flood it.
constexpr int kWindow = 8;

/// One byte offset or count per peer: up to 16 peers cost no malloc (recycled_allocation.hpp).
using PeerBytes = std::vector<std::size_t, ShortListAllocator<std::size_t, 16>>;

/// Byte ranges of one exchange: what goes to and comes from each peer. An all_to_all's are
/// one block per peer, at the peer's index in both buffers, a reduce-scatter's the same without
/// the own block's copy, and an all_gather's one block sent to every peer from one place: none
/// needs lists (nor their allocations, on every call); an all_to_allv's come from the caller's
/// counts and offsets, and an all-reduce's from its nearly equal parts of any count.
class ExchangePlan {
 public:
  /// Every peer's bytes are `block` bytes at peer * block.
  static ExchangePlan uniform(std::size_t block) {
    ExchangePlan plan;
    plan.block_ = block;
    return plan;
  }
  /// As uniform, but this rank's own block is not copied: a reduce-scatter reads it in place.
  static ExchangePlan scattering(std::size_t block) {
    ExchangePlan plan = uniform(block);
    plan.copies_own_block_ = false;
    return plan;
  }
  /// Every peer gets the same `block` bytes, at `sent_from` in the input; peer p's come to
  /// p * block.
  static ExchangePlan gathering(std::size_t block, std::size_t sent_from) {
    ExchangePlan plan;
    plan.block_ = block;
    plan.sent_from_ = sent_from;
    return plan;
  }
  /// Peer p's bytes go from send_offset[p] (send_bytes[p] of them) and come to recv_offset[p].
  static ExchangePlan listed(PeerBytes send_offset, PeerBytes send_bytes, PeerBytes recv_offset, PeerBytes recv_bytes) {
    ExchangePlan plan;
    plan.send_offset_ = std::move(send_offset);
    plan.send_bytes_ = std::move(send_bytes);
    plan.recv_offset_ = std::move(recv_offset);
    plan.recv_bytes_ = std::move(recv_bytes);
    return plan;
  }

  [[nodiscard]] std::size_t send_offset(int peer) const {
    if (sent_from_) return *sent_from_;
    return pick(send_offset_, peer, static_cast<std::size_t>(peer) * block_);
  }
  [[nodiscard]] std::size_t send_bytes(int peer) const { return pick(send_bytes_, peer, block_); }
  [[nodiscard]] std::size_t recv_offset(int peer) const {
    return pick(recv_offset_, peer, static_cast<std::size_t>(peer) * block_);
  }
  [[nodiscard]] std::size_t recv_bytes(int peer) const { return pick(recv_bytes_, peer, block_); }
  /// Whether this rank's own block is copied from the input to the output.
  [[nodiscard]] bool copies_own_block() const noexcept { return copies_own_block_; }
  /// Every byte this rank receives, its own block included.
  [[nodiscard]] std::size_t received_in_all(int size) const {
    if (recv_bytes_.empty()) return static_cast<std::size_t>(size) * block_;
    return std::accumulate(recv_bytes_.begin(), recv_bytes_.end(), std::size_t{0});
  }

 private:
  /// `values[peer]`, or `uniform` where the plan has no list.
  [[nodiscard]] static std::size_t pick(const PeerBytes& values, int peer, std::size_t uniform) {
    return values.empty() ? uniform : values[static_cast<std::size_t>(peer)];
  }

  std::size_t block_ = 0;
  std::optional<std::size_t> sent_from_;  ///< a gathering plan's one place of what it sends
  bool copies_own_block_ = true;
  PeerBytes send_offset_, send_bytes_, recv_offset_, recv_bytes_;
};

/// Pairwise exchange: in step s a rank sends to rank+s and receives from rank-s, `kWindow`
/// steps at a time, on internal tag `tag`; its own block is a local copy (none where `input`
/// is `output`, or where the plan says so).
std::shared_ptr<WorkState> start_pairwise(CommunicatorImpl& comm, const void* input, void* output, ExchangePlan plan,
                                          OperationLabel label, MemoryKind memory, int tag) {
  const int rank = comm.rank();
  const int size = comm.size();
  if (input != output && plan.copies_own_block()) {
    // The copy streams where the whole output, which the receives write the rest of, is too
    // large to stay cached.
    copy_bytes(byte_offset(output, plan.recv_offset(rank)), byte_offset(input, plan.send_offset(rank)),
               plan.send_bytes(rank), memory, plan.received_in_all(size));
  }
  const int batches = (size - 1 + kWindow - 1) / kWindow;
  auto start_batch = [&comm, input, output, plan = std::move(plan), rank, size, tag, label, memory](int batch) {
    const int first = 1 + batch * kWindow;
    const int last = std::min(size - 1, (batch + 1) * kWindow);
    WorkList works;
    works.reserve(2 * static_cast<std::size_t>(last - first + 1));
    for (int step = first; step <= last; ++step) {
      const int to = pairwise_send_peer(rank, size, step);
      const int from = pairwise_recv_peer(rank, size, step);
      works.push_back(recv_bytes(comm, byte_offset(output, plan.recv_offset(from)), plan.recv_bytes(from), from, tag,
                                 label, memory));
      works.push_back(
          send_bytes(comm, byte_offset(input, plan.send_offset(to)), plan.send_bytes(to), to, tag, label, memory));
    }
    return works;
  };
  // One batch (up to kWindow + 1 ranks) needs no schedule: its exchanges start now, and the
  // call holds no std::function, whose captures (the plan) would be one more allocation.
  if (batches == 1) return make_recycled<GroupWorkState>(start_batch(0));
  return make_schedule(batches, std::move(start_batch));
}

/// In place at two ranks and past kCopiedAsideUpTo: a neighbour-trade schedule
/// (patterns/pairwise.hpp), as Open MPI's blocking in-place all-to-all runs. One block of
/// scratch, copied once a step, and every rank busy in every step, where a round-robin of swaps
/// copied every block aside and, at odd sizes, left a rank idle in each round while the next
/// swap waited for it: on two cores, 128 KiB-16 MiB in place, alternated launches, the trades
/// took 0.81-1.02x the swaps' time at three ranks and 0.86-1.05x at four (identical at two).
std::shared_ptr<WorkState> start_neighbour_trades(CommunicatorImpl& comm, void* data, std::size_t block,
                                                  OperationLabel label, MemoryKind memory, int tag) {
  const int rank = comm.rank();
  const int size = comm.size();
  auto aside = comm.scratch().acquire(block, memory);
  auto block_of = [data, block](int peer) { return byte_offset(data, static_cast<std::size_t>(peer) * block); };
  return make_schedule(trade_halves(size), [&comm, block_of, aside, block, rank, size, tag, label, memory](int half) {
    const TradeHalf trade = trade_half(rank, size, half);
    WorkList works;
    if (trade.copy_aside >= 0) copy_aside_to_send(aside.get(), block_of(trade.copy_aside), block, memory);
    if (trade.receive_from >= 0) {
      works.push_back(recv_bytes(comm, block_of(trade.receive_from), block, trade.receive_from, tag, label, memory));
    }
    if (trade.send_to >= 0) {
      const void* sent = trade.send_aside ? aside.get() : block_of(trade.send_to);
      works.push_back(send_bytes(comm, sent, block, trade.send_to, tag, label, memory));
    }
    return works;
  });
}

/// In place, up to this many bytes in all, from three ranks: every peer's block is copied aside
/// at once and one pairwise round sends from the copy (start_exchange_from_copy).
constexpr std::size_t kCopiedAsideUpTo = std::size_t{1} << 20;

/// In place: every peer's block copied aside at once, then one pairwise round from the copy, as
/// Open MPI's nonblocking in-place all-to-all runs: the peers' blocks move together where the
/// neighbour trades move them two at a time, in size / 2 dependent steps, at the cost of a copy of
/// the whole buffer where the trades copy one block a step. On the AMD EPYC VM on 2026-12-01
/// (`alltoall_perf -b 256K -e 16M -f 2 --repeat 7`, this path beside the trades in each launch, in
/// place, mpi_best / time, user buffers, two launches each at 3 and 4 ranks on its two cores) it
/// ran 1.06-1.20x at 256 KiB-1 MiB at three ranks where the trades ran 0.88-0.99x, and 1.17-1.33x
/// at four against 0.93-1.00x; on ucx (two alternated launches each of `--backend ucx --algo
/// pairwise -b 256K -e 1M -f 2`, with and without this path) 0.85-1.27x against 0.57-1.03x, ahead
/// at 256 KiB and at four ranks, level at 512 KiB-1 MiB at three; on inproc's threads 64-181 us
/// against 86-223 at three and four threads, but for 1 MiB at three (126-145 against 135-140).
/// Larger buffers stay with the trades: at 2-4 MiB four alternated launches (`--algo pairwise -b 1M
/// -e 4M --repeat 9`, with and without this path) put it at 0.60-0.91x against the trades'
/// 0.87-0.96x (0.92-1.10x against 0.92-0.95x at 1 MiB), though streaming the copy had run level or
/// ahead in the launches above: with the ranks' cores busy, the whole buffer's copy (3 MiB at four
/// ranks: some 0.2 ms at the 13-15 GB/s a core streams here, of a 1.03 ms call) costs what the
/// blocks' moving together saves.
std::shared_ptr<WorkState> start_exchange_from_copy(CommunicatorImpl& comm, void* data, std::size_t block,
                                                    OperationLabel label, MemoryKind memory, int tag) {
  const std::size_t total = block * static_cast<std::size_t>(comm.size());
  const std::size_t own = static_cast<std::size_t>(comm.rank()) * block;
  auto copy = comm.scratch().acquire(total, memory);
  // The copy streams where the buffer and the copy together are too large to stay cached: the
  // peers read it next, from their own cores.
  copy_bytes(copy.get(), data, own, memory, 2 * total);
  copy_bytes(copy.get() + own + block, byte_offset(data, own + block), total - own - block, memory, 2 * total);
  auto exchange = start_pairwise(comm, copy.get(), data, ExchangePlan::scattering(block), label, memory, tag);
  // The schedule holds the copy until the round is over.
  return make_schedule(1, [copy, exchange = std::move(exchange), timeout = comm.timeout()](int) {
    WorkList works;
    works.emplace_back(exchange, timeout);
    return works;
  });
}

class PairwiseAllToAll final : public OneTagAlgorithmOf<CollectiveKind::all_to_all> {
 public:
  PairwiseAllToAll() : OneTagAlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    const int size = comm.size();
    const std::size_t block = args.input.bytes() / static_cast<std::size_t>(size);
    const MemoryKind memory = args.output.memory;
    if (args.in_place && size > 2 && args.output.bytes() <= kCopiedAsideUpTo) {
      return start_exchange_from_copy(comm, args.output.data, block, args.label, memory, tag);
    }
    if (args.in_place) return start_neighbour_trades(comm, args.output.data, block, args.label, memory, tag);
    return start_pairwise(comm, args.input.data, args.output.data, ExchangePlan::uniform(block), args.label, memory,
                          tag);
  }
};

class PairwiseAllToAllv final : public OneTagAlgorithmOf<CollectiveKind::all_to_allv> {
 public:
  PairwiseAllToAllv() : OneTagAlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    const std::size_t element = size_of(args.input.type);
    const auto peers = static_cast<std::size_t>(comm.size());
    PeerBytes send_offset(peers), send_bytes(peers), recv_offset(peers), recv_bytes(peers);
    for (std::size_t peer = 0; peer < peers; ++peer) {
      send_offset[peer] = args.layout.send_offsets[peer] * element;
      send_bytes[peer] = args.layout.send_counts[peer] * element;
      recv_offset[peer] = args.layout.recv_offsets[peer] * element;
      recv_bytes[peer] = args.layout.recv_counts[peer] * element;
    }
    return start_pairwise(comm, args.input.data, args.output.data,
                          ExchangePlan::listed(std::move(send_offset), std::move(send_bytes), std::move(recv_offset),
                                               std::move(recv_bytes)),
                          args.label, args.output.memory, tag);
  }
};

/// Every rank sends its block straight to every other rank, kWindow peers at a time: with up to
/// kWindow + 1 ranks every transfer is in flight at once, none waiting for another, where the
/// ring passes blocks on in size - 1 dependent steps.
class PairwiseAllGather final : public OneTagAlgorithmOf<CollectiveKind::all_gather> {
 public:
  PairwiseAllGather() : OneTagAlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int first_tag) const override {
    const std::size_t block = args.input.bytes();
    const std::size_t own = static_cast<std::size_t>(comm.rank()) * block;
    // In place the block is sent from the output, where it already is: nothing to copy.
    const void* input = args.in_place ? args.output.data : args.input.data;
    return start_pairwise(comm, input, args.output.data, ExchangePlan::gathering(block, args.in_place ? own : 0),
                          args.label, args.output.memory, first_tag);
  }
};

/// output = `own`, then each other rank's slot (rank p's at arrived + p * slot_bytes), in rank
/// order, over `count` elements; divided for an average. `output` may be `own` (in place), which
/// only the first reduction reads.
void reduce_arrivals(void* output, const void* own, const std::byte* arrived, std::size_t slot_bytes,
                     std::size_t count, int rank, int size, DataType type, ReduceOp op, MemoryKind memory) {
  bool first = true;
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    const std::byte* sent = arrived + static_cast<std::size_t>(p) * slot_bytes;
    if (first) {
      reduce_pair(output, own, sent, count, type, op, memory);
    } else {
      reduce_into(output, sent, count, type, op, memory);
    }
    first = false;
  }
  if (first && output != own) copy_bytes(output, own, count * size_of(type), memory);  // one rank
  if (op == ReduceOp::avg) divide_for_average(output, count, type, size, memory);
}

/// Every rank sends block q of its input straight to rank q, kWindow peers at a time, and sums
/// the blocks it gets, in rank order, once they are all in: with up to kWindow + 1 ranks one
/// round of transfers, none waiting for another, where the ring takes size - 1 dependent steps.
class PairwiseReduceScatter final : public OneTagAlgorithmOf<CollectiveKind::reduce_scatter> {
 public:
  PairwiseReduceScatter() : OneTagAlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    const int rank = comm.rank();
    const int size = comm.size();
    const std::size_t block = args.output.bytes();
    const MemoryKind memory = args.output.memory;
    // Peer p's block for this rank arrives at p * block; this rank's own slot stays unused.
    auto arrived = comm.scratch().acquire(block * static_cast<std::size_t>(size), memory);
    auto exchange = start_pairwise(comm, args.input.data, arrived.get(), ExchangePlan::scattering(block), args.label,
                                   memory, tag);
    return make_schedule(2, [args, arrived, exchange = std::move(exchange), timeout = comm.timeout(), block, rank,
                             size, memory](int step) {
      WorkList works;
      if (step == 0) {
        if (exchange) works.emplace_back(exchange, timeout);
      } else {
        const void* own = byte_offset(args.input.data, static_cast<std::size_t>(rank) * block);
        reduce_arrivals(args.output.data, own, arrived.get(), block, args.output.count, rank, size, args.output.type,
                        args.op, memory);
      }
      return works;
    });
  }
};

/// A reduce-scatter and an all-gather, each one pairwise round: every rank sends its input's
/// part p (of `size` nearly equal parts) straight to rank p, sums the parts it gets into its own,
/// then sends that to every rank. Two rounds of transfers where the ring takes 2 (P - 1)
/// dependent steps and Rabenseifner's 2 log2(P).
class PairwiseAllReduce final : public AlgorithmOf<CollectiveKind::all_reduce> {
 public:
  PairwiseAllReduce() : AlgorithmOf("pairwise") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    return start_on_tags(comm, args, comm.reserve_internal_tags(takeover_tags()));
  }
  int takeover_tags() const noexcept override { return 2; }  // one per round
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tags) const override {
    const int rank = comm.rank();
    const int size = comm.size();
    const std::size_t element = size_of(args.output.type);
    const auto own = block_of(args.output.count, size, rank);
    const std::size_t own_bytes = own.count * element;
    const MemoryKind memory = args.output.memory;
    // Rank p's copy of this rank's part arrives in slot p; this rank's own slot stays unused.
    auto arrived = comm.scratch().acquire(std::max<std::size_t>(own_bytes, 1) * static_cast<std::size_t>(size),
                                          memory);
    auto scatter = start_pairwise(comm, args.input.data, arrived.get(),
                                  parts_out(args.output.count, size, rank, element, own_bytes), args.label, memory,
                                  tags);
    return make_schedule(2, [&comm, args, arrived, scatter = std::move(scatter), timeout = comm.timeout(), own,
                             own_bytes, element, rank, size, memory, tags](int step) {
      WorkList works;
      if (step == 0) {
        if (scatter) works.emplace_back(scatter, timeout);
        return works;
      }
      void* result = byte_offset(args.output.data, own.offset * element);
      reduce_arrivals(result, byte_offset(args.input.data, own.offset * element), arrived.get(), own_bytes, own.count,
                      rank, size, args.output.type, args.op, memory);
      auto gather = start_pairwise(comm, args.output.data, args.output.data,
                                   parts_in(args.output.count, size, element, own.offset * element, own_bytes),
                                   args.label, memory, tags + 1);
      if (gather) works.emplace_back(std::move(gather), timeout);
      return works;
    });
  }

 private:
  /// The reduce-scatter round: part p of the input to rank p; from every rank, its copy of this
  /// rank's part (`own_bytes`), into slot p.
  static ExchangePlan parts_out(std::size_t count, int size, int rank, std::size_t element, std::size_t own_bytes) {
    const auto peers = static_cast<std::size_t>(size);
    PeerBytes send_offset(peers), send_bytes(peers), recv_offset(peers), recv_bytes(peers, own_bytes);
    for (std::size_t p = 0; p < peers; ++p) {
      const auto part = block_of(count, size, static_cast<int>(p));
      send_offset[p] = part.offset * element;
      send_bytes[p] = part.count * element;
      recv_offset[p] = p * own_bytes;
    }
    // Nothing goes to this rank itself: its own part is read where it is.
    send_bytes[static_cast<std::size_t>(rank)] = recv_bytes[static_cast<std::size_t>(rank)] = 0;
    return ExchangePlan::listed(std::move(send_offset), std::move(send_bytes), std::move(recv_offset),
                                std::move(recv_bytes));
  }
  /// The all-gather round: this rank's reduced part (at `own_offset`) to every rank; rank p's
  /// into part p of the output.
  static ExchangePlan parts_in(std::size_t count, int size, std::size_t element, std::size_t own_offset,
                               std::size_t own_bytes) {
    const auto peers = static_cast<std::size_t>(size);
    PeerBytes send_offset(peers, own_offset), send_bytes(peers, own_bytes), recv_offset(peers), recv_bytes(peers);
    for (std::size_t p = 0; p < peers; ++p) {
      const auto part = block_of(count, size, static_cast<int>(p));
      recv_offset[p] = part.offset * element;
      recv_bytes[p] = part.count * element;
    }
    return ExchangePlan::listed(std::move(send_offset), std::move(send_bytes), std::move(recv_offset),
                                std::move(recv_bytes));
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_pairwise_all_to_all() { return std::make_unique<PairwiseAllToAll>(); }
std::unique_ptr<Algorithm> make_pairwise_all_to_allv() { return std::make_unique<PairwiseAllToAllv>(); }
std::unique_ptr<Algorithm> make_pairwise_all_gather() { return std::make_unique<PairwiseAllGather>(); }
std::unique_ptr<Algorithm> make_pairwise_reduce_scatter() { return std::make_unique<PairwiseReduceScatter>(); }
std::unique_ptr<Algorithm> make_pairwise_all_reduce() { return std::make_unique<PairwiseAllReduce>(); }

}  // namespace meshcomm::detail
