// Single-copy collectives through shared memory, for ranks that are processes on one node.
//
// Each rank first tells the others where its input (and, for the all-reduce, its output) lives:
// through the communicator's eager slots where it has them (an all-gather of the descriptors, a
// fraction of a microsecond), else by messages (2-3 us at two ranks on mpi). When every rank's
// input (and output) is in a meshcomm shared segment (Communicator::allocate_shared) and all
// ranks are on one host, each rank reads its peers' buffers straight from their memory: one copy
// per byte, no staging, no network stack. A barrier after each phase of copies keeps every buffer
// untouched until all peers have read it (the all-reduce has two phases: it reads the peers'
// outputs in the second; so has the all-to-all in place, which copies the peers' blocks aside
// before it overwrites its own). Otherwise every rank hands the call over to the algorithm the
// selection table names next (the pairwise exchange at 3-9 ranks, the ring, recursive halving's
// reduce-scatter or Rabenseifner's all-reduce for more ranks, the binomial tree for a broadcast;
// never `native`, whose MPI collective, started from this operation's progress, could be ordered
// differently on different ranks against later ones); they all see the same descriptors, so they
// all decide alike, and a rank whose own buffers are not shared starts the takeover without
// waiting for the others' descriptors. Where the table names the eager path (the all-reduce, in
// pieces through the slots; the all-to-all in place, whose pairs of ranks swap their blocks), the
// takeover is reserved on the slots behind the exchange as the call starts
// (eager operations are numbered in call order, as tags are) and decided by the eager path
// itself from the same descriptors once the exchange has finished: it runs, or its operations
// are skipped on every rank (EagerMailbox::start_if).

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "call_record.hpp"
#include "collective_engine.hpp"
#include "dissemination_barrier.hpp"
#include "eager/eager_mailbox.hpp"
#include "internal_p2p.hpp"
#include "patterns/partition.hpp"
#include "plain_copy.hpp"
#include "recycled_allocation.hpp"
#include "reduction.hpp"
#include "shared_memory/shared_segment.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::detail {

namespace {

/// Whether an algorithm reads its peers' outputs as well as their inputs.
enum class PeerOutputs { unread, read };

/// How a rank stores the sums it writes: plain, or streamed around the cache. For results its
/// peers read in a later phase of the call, rank 0 chooses for all (peer_read_store_choice(),
/// timed over its writing and reading both) and says so in its descriptor: what a rank's stores
/// cost shows in its peers' reading, so ranks that chose apart would each time the others' choice
/// as much as their own.
enum class Stores : std::uint8_t { plain = 0, streamed = 1 };

/// Where one rank's input (and output, where peers read it) lives, as the other ranks need to
/// know it.
struct RegionDescriptor {
  std::uint64_t host = 0;
  SegmentReference segment;         ///< the input's; empty: not in a shared segment
  SegmentReference output_segment;  ///< the output's, where peers read it; else empty
  Stores peer_read_stores = Stores::plain;  ///< rank 0's choice, where peers read outputs
  bool hands_over = false;  ///< rank 0's measured choice: the takeover, though every buffer is shared
  bool to_runner_up = false;  ///< rank 0's measured choice: the runner-up takes a call handed over

  /// Whether this rank's buffers let peers run the single copy.
  [[nodiscard]] bool shared(PeerOutputs outputs) const noexcept {
    return !segment.empty() && (outputs == PeerOutputs::unread || !output_segment.empty());
  }
};

SegmentReference locate(CommunicatorImpl& comm, const void* data, std::size_t bytes) {
  if (auto location = comm.shared_memory().locate(data, bytes)) return SegmentReference::of(*location);
  return {};
}

/// Rank 0's choice of stores for a call whose peers read its results: measured, or, where
/// MESHCOMM_STREAMING_STORES=always, streamed from the threshold out of place.
Stores choose_peer_read_stores(const CollectiveArgs& args) {
  const std::size_t bytes = args.output.bytes();
  if (MeasuredChoice* choice = peer_read_store_choice(args.in_place)) {
    return choice->choose(bytes) == 1 ? Stores::streamed : Stores::plain;
  }
  return !args.in_place && bytes >= streaming_copy_threshold() ? Stores::streamed : Stores::plain;
}

/// Records on rank 0 that `args`'s call took `took` in its own phases with `stores`.
void record_peer_read_stores(const CollectiveArgs& args, Stores stores, std::chrono::nanoseconds took) {
  const std::size_t bytes = args.output.bytes();
  if (MeasuredChoice* choice = peer_read_store_choice(args.in_place)) {
    choice->record(bytes, static_cast<int>(stores), took);
  }
}

RegionDescriptor describe(CommunicatorImpl& comm, const CollectiveArgs& args, PeerOutputs outputs) {
  RegionDescriptor descriptor;
  descriptor.host = host_identity();
  descriptor.segment = locate(comm, args.input.data, args.input.bytes());
  if (outputs == PeerOutputs::read) {
    descriptor.output_segment = locate(comm, args.output.data, args.output.bytes());
    if (comm.rank() == 0 && descriptor.shared(outputs)) descriptor.peer_read_stores = choose_peer_read_stores(args);
  }
  return descriptor;
}

/// Every rank's input and, where the algorithm reads them, output, in rank order, as this
/// process sees them (a peer's mapped into it).
struct PeerMemory {
  std::vector<const std::byte*> inputs;
  std::vector<const std::byte*> outputs;
  Stores peer_read_stores = Stores::plain;  ///< as rank 0 chose, where peers read outputs
};

/// Every rank's descriptor, in rank order: up to 16 ranks cost no malloc (recycled_allocation.hpp).
using Descriptors = std::vector<RegionDescriptor, ShortListAllocator<RegionDescriptor, 16>>;

/// Whether every rank's buffers let the single copy run, every rank on this rank's host.
bool every_rank_shared(const Descriptors& descriptors, PeerOutputs outputs, int rank) {
  return std::all_of(descriptors.begin(), descriptors.end(), [&](const RegionDescriptor& descriptor) {
    return descriptor.shared(outputs) && descriptor.host == descriptors[static_cast<std::size_t>(rank)].host;
  });
}

/// The in-place all-gather of every rank's descriptor into `descriptors`, for the eager slots.
CollectiveArgs descriptor_exchange(Descriptors& descriptors, int rank, OperationLabel label) {
  const std::size_t bytes = sizeof(RegionDescriptor);
  return {.kind = CollectiveKind::all_gather,
          .input = {&descriptors[static_cast<std::size_t>(rank)], bytes, DataType::u8, MemoryKind::host},
          .output = {descriptors.data(), bytes * descriptors.size(), DataType::u8, MemoryKind::host},
          .in_place = true,
          .label = label};
}

/// The choices rank 0 of a single-copy collective measures and makes for every rank, stating
/// them in its descriptor; null: not made.
struct RankZeroChoices {
  /// Where every rank's buffers are shared: the phases (way 0) or the takeover (way 1).
  MeasuredChoice* phases_or_takeover = nullptr;
  /// Where some rank's buffers are not shared and the takeover runs on the eager slots: that
  /// takeover (way 0) or the next algorithm in the table's order that takes over on tags (way 1;
  /// its runner-up, CollectiveEngine::runner_up_for).
  MeasuredChoice* takeover_or_runner_up = nullptr;
};

/// The steps every single-copy collective shares: exchange descriptors, then either run its
/// phases of copies from the peers' memory, each closed by a barrier, or hand the call over.
class SingleCopySchedule {
 public:
  /// Each of `phases`, called as `phase(peer_memory)` with a PeerMemory, does this rank's local
  /// work of that phase; the next starts once every rank has finished it. `outputs` says whether
  /// the phases read the peers' outputs (then those must be shared too). `self`, the algorithm
  /// calling, is the one the call is handed over from: its successor is chosen, and its tags
  /// reserved, as the operation starts (tags must be reserved in issue order on every rank).
  /// `choices` are the ones rank 0 measures and makes for every rank (RankZeroChoices): each call
  /// that takes one of their ways counts its time on rank 0, from its start to its end, for it.
  template <class... Phases>
  static std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args, const Algorithm& self,
                                          PeerOutputs outputs, RankZeroChoices choices, Phases... phases) {
    constexpr int kPhases = sizeof...(Phases);
    const void* input = args.input.data;
    const void* output = args.output.data;
    const auto label = args.label;
    const auto started = std::chrono::steady_clock::now();
    const std::size_t bytes = args.output.bytes();
    auto descriptors = make_recycled<Descriptors>(static_cast<std::size_t>(comm.size()));
    RegionDescriptor& own = (*descriptors)[comm.rank()];
    own = describe(comm, args, outputs);
    const Algorithm& takeover = comm.collectives().takeover_for(comm, args, self);
    const Algorithm* runner_up = choices.takeover_or_runner_up != nullptr && takeover.takes_over_in_slots()
                                     ? comm.collectives().runner_up_for(comm, args, self, takeover)
                                     : nullptr;
    MeasuredChoice* phases_timed = comm.rank() == 0 && own.shared(outputs) ? choices.phases_or_takeover : nullptr;
    MeasuredChoice* takeover_timed = comm.rank() == 0 && runner_up != nullptr ? choices.takeover_or_runner_up : nullptr;
    if (phases_timed != nullptr) own.hands_over = phases_timed->choose(bytes) == 1;
    if (takeover_timed != nullptr) own.to_runner_up = takeover_timed->choose(bytes) == 1;
    // The eager exchange starts now, as the call is made, like every eager operation; the ranks
    // compare this call's record in it, so ones that disagree about the call fail alike.
    std::shared_ptr<WorkState> eager_exchange;
    const bool exchange_eagerly = comm.eager_mailbox() != nullptr;
    if (exchange_eagerly) {
      eager_exchange = start_eager(comm, descriptor_exchange(*descriptors, comm.rank(), label), CallRecord::of(args),
                                   descriptors);
    }
    const int tag = exchange_eagerly ? 0 : comm.reserve_internal_tags(1);
    const int first_barrier_tag = comm.reserve_internal_tags(kPhases);
    // A takeover on the eager slots (the eager all-reduce or all-to-all) is reserved behind the exchange, which
    // decides on every rank alike whether it runs; one on tags reserves its tags, as does a runner-up.
    std::shared_ptr<WorkState> takeover_in_slots;
    int takeover_tag = 0;
    if (takeover.takes_over_in_slots()) {
      takeover_in_slots = takeover.start_in_slots_if(comm, args, [descriptors, outputs, rank = comm.rank()] {
        const RegionDescriptor& first = descriptors->front();
        return every_rank_shared(*descriptors, outputs, rank) ? first.hands_over : !first.to_runner_up;
      });
    } else {
      takeover_tag = comm.reserve_internal_tags(takeover.takeover_tags());
    }
    const int runner_up_tag = runner_up != nullptr ? comm.reserve_internal_tags(runner_up->takeover_tags()) : 0;
    auto hand_over = [&comm, args, &takeover, takeover_tag, takeover_in_slots, runner_up, runner_up_tag,
                      timeout = comm.timeout()](bool to_runner_up) {
      WorkList works;
      // A takeover reserved in the slots is waited on either way: skipped, it is decided at once.
      if (takeover_in_slots) works.emplace_back(takeover_in_slots, timeout);
      std::shared_ptr<WorkState> state;
      if (to_runner_up) {
        state = runner_up->start_on_tags(comm, args, runner_up_tag);
      } else if (!takeover_in_slots) {
        state = takeover.start_on_tags(comm, args, takeover_tag);
      }
      if (state) works.emplace_back(std::move(state), timeout);
      return works;
    };
    const auto timeout = comm.timeout();
    // A rank whose own buffers are not shared knows the outcome already: where it need not hear
    // rank 0's choice of takeover either, it hands the call over at once, without waiting for the
    // others' descriptors.
    const bool falls_back_anyway = !(*descriptors)[comm.rank()].shared(outputs);
    const bool hands_over_at_once = falls_back_anyway && runner_up == nullptr;
    if (hands_over_at_once && exchange_eagerly) {
      // The common case of buffers a trainer already has: the eager exchange (which keeps the
      // descriptors) and the takeover side by side, with no schedule around them.
      WorkList works = hand_over(false);
      if (eager_exchange) works.emplace_back(std::move(eager_exchange), timeout);
      if (works.empty()) return nullptr;
      return make_recycled<GroupWorkState>(std::move(works));
    }
    // Where rank 0 times the call for a choice, a last step without works marks its end.
    const bool timed = phases_timed != nullptr || takeover_timed != nullptr;
    const int steps = 1 + kPhases + (timed ? 1 : 0);
    return make_schedule(steps, [&comm, descriptors, input, output, outputs, label, tag, first_barrier_tag,
                                 timeout, hands_over_at_once, eager_exchange = std::move(eager_exchange),
                                 exchange_eagerly, phases = std::make_tuple(std::move(phases)...), hand_over,
                                 memory = PeerMemory{}, runs = false, phases_timed, takeover_timed, started,
                                 bytes, measured = static_cast<MeasuredChoice*>(nullptr),
                                 measured_way = 0](int step) mutable {
      WorkList works;
      const int rank = comm.rank();
      if (step > kPhases) {  // the end of a call rank 0 times
        if (measured != nullptr) measured->record(bytes, measured_way, std::chrono::steady_clock::now() - started);
        return works;
      }
      if (step == 0) {
        works.reserve(2 * static_cast<std::size_t>(comm.size()));  // descriptors both ways, and a takeover
        if (exchange_eagerly) {
          if (eager_exchange) works.emplace_back(eager_exchange, timeout);
        } else {
          for (int peer = 0; peer < comm.size(); ++peer) {
            if (peer == rank) continue;
            works.push_back(recv_bytes(comm, &(*descriptors)[peer], sizeof(RegionDescriptor), peer, tag, label,
                                       MemoryKind::host));
            works.push_back(send_bytes(comm, &(*descriptors)[rank], sizeof(RegionDescriptor), peer, tag, label,
                                       MemoryKind::host));
          }
        }
        if (hands_over_at_once) {
          for (auto& work : hand_over(false)) works.push_back(std::move(work));
        }
        return works;
      }
      if (hands_over_at_once) return works;
      if (step == 1) {
        const RegionDescriptor& first = descriptors->front();
        if (!every_rank_shared(*descriptors, outputs, rank)) {
          if (takeover_timed != nullptr) {
            measured = takeover_timed;
            measured_way = first.to_runner_up ? 1 : 0;
          }
          return hand_over(first.to_runner_up);
        }
        if (phases_timed != nullptr) {
          measured = phases_timed;
          measured_way = first.hands_over ? 1 : 0;
        }
        if (first.hands_over) return hand_over(false);
        runs = true;
        memory.peer_read_stores = first.peer_read_stores;
        auto peer_address = [&comm](const SegmentReference& segment) -> const std::byte* {
          const auto location = segment.location();
          return comm.shared_memory().map_peer(location.handle) + location.offset;
        };
        for (int peer = 0; peer < comm.size(); ++peer) {
          const auto& descriptor = (*descriptors)[peer];
          memory.inputs.push_back(peer == rank ? static_cast<const std::byte*>(input)
                                               : peer_address(descriptor.segment));
          if (outputs == PeerOutputs::unread) continue;
          memory.outputs.push_back(peer == rank ? static_cast<const std::byte*>(output)
                                                : peer_address(descriptor.output_segment));
        }
      }
      if (!runs) return works;  // handed over in step 1
      const int phase = step - 1;
      std::apply([&](auto&... each) { int index = 0; ((index++ == phase ? each(memory) : void()), ...); }, phases);
      works.emplace_back(start_dissemination_barrier(comm, label, first_barrier_tag + phase), timeout);
      return works;
    });
  }
};

/// The shm algorithm of `Kind`: it runs between processes, on host memory.
template <CollectiveKind Kind>
class ShmAlgorithmOf : public AlgorithmOf<Kind> {
 public:
  ShmAlgorithmOf() : AlgorithmOf<Kind>("shm") {}
  std::string unsupported_reason(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    if (args.output.memory != MemoryKind::host) return "the shm algorithms read host memory through shared segments";
    const auto kind = comm.backend().kind();
    if (kind == BackendKind::mpi || kind == BackendKind::ucx) return {};  // one rank per process
    return "the shm algorithms join processes on one node; inproc ranks already share memory";
  }
};

class ShmAllGather final : public ShmAlgorithmOf<CollectiveKind::all_gather> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t block = args.input.bytes();
    const int rank = comm.rank();
    return SingleCopySchedule::start(
        comm, args, *this, PeerOutputs::unread, {}, [args, block, rank](const PeerMemory& memory) {
          // The copies stream when the whole output outgrows the cache, in place too (at 16 MiB
          // in place, 8 MiB copied per rank, that ran 2.2-2.5x Open MPI against 1.7x plain), and
          // take the stores measured faster below that from 1 MiB (copy_into_own_result).
          const auto& inputs = memory.inputs;
          const std::size_t output_bytes = block * inputs.size();
          for (std::size_t peer = 0; peer < inputs.size(); ++peer) {
            if (static_cast<int>(peer) == rank && args.in_place) continue;
            if (block > 0) {
              copy_into_own_result(byte_offset(args.output.data, peer * block), inputs[peer], block,
                                   {.output_bytes = output_bytes, .in_place = args.in_place});
            }
          }
        });
  }
};

/// One address per rank: up to 16 ranks cost no malloc (recycled_allocation.hpp).
using BlockAddresses = std::vector<const void*, ShortListAllocator<const void*, 16>>;

/// `output = blocks[0] op blocks[1] op ...` over `count` elements of the call's type, averaged
/// for `avg`, with plain stores or streamed out (each line written once, summed a cached chunk at
/// a time). The first block is this rank's own: in place the output is that very memory, so it
/// must be read before anything is written over it.
void sum_blocks(void* output, const BlockAddresses& blocks, std::size_t count, const CollectiveArgs& args,
                Stores stores) {
  if (count == 0) return;
  const auto type = args.output.type;
  const int size = static_cast<int>(blocks.size());
  if (stores == Stores::streamed) {
    reduce_streaming(output, blocks, count, type, args.op);
  } else if (size == 1) {
    if (output != blocks[0]) plain_copy(output, blocks[0], count * size_of(type));
  } else {
    reduce_pair(output, blocks[0], blocks[1], count, type, args.op);
    for (std::size_t peer = 2; peer < blocks.size(); ++peer) reduce_into(output, blocks[peer], count, type, args.op);
  }
  if (args.op == ReduceOp::avg) divide_for_average(output, count, type, size);
}

/// sum_blocks() for a result only this rank reads. `total_bytes`: what the operation writes on
/// this rank, from which with_faster_reduction_stores() may stream the sums out; 0 in place,
/// where the output was read just before and plain stores find it cached.
void reduce_blocks(void* output, const BlockAddresses& blocks, std::size_t count, const CollectiveArgs& args,
                   std::size_t total_bytes) {
  if (count == 0) return;
  with_faster_reduction_stores(
      count * size_of(args.output.type), total_bytes,
      [&] { sum_blocks(output, blocks, count, args, Stores::plain); },
      [&] { sum_blocks(output, blocks, count, args, Stores::streamed); });
}

/// The block at `offset` bytes into each rank's input, this rank's own first.
BlockAddresses blocks_at(const PeerMemory& memory, int rank, std::size_t offset) {
  const auto size = memory.inputs.size();
  BlockAddresses blocks(size);
  for (std::size_t peer = 0; peer < size; ++peer) {
    blocks[peer] = memory.inputs[(static_cast<std::size_t>(rank) + peer) % size] + offset;
  }
  return blocks;
}

class ShmReduceScatter final : public ShmAlgorithmOf<CollectiveKind::reduce_scatter> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t block = args.output.bytes();
    const int rank = comm.rank();
    return SingleCopySchedule::start(
        comm, args, *this, PeerOutputs::unread, {}, [args, block, rank](const PeerMemory& memory) {
          reduce_blocks(args.output.data, blocks_at(memory, rank, rank * block), args.output.count, args,
                        args.in_place ? 0 : block);
        });
  }
};

/// Two phases. First every rank reduces its share of the elements (the P shares differ by at most
/// one element) from every rank's input into the same place of its own output; then it copies
/// the other shares from their owners' outputs. Each input byte is read once, each result byte
/// written once per rank, with no staging: a reduce-scatter and an all-gather of the shm paths
/// back to back, without a second call. It needs every rank's output shared too. In place the
/// phases never collide: a rank writes its own share in the first, which no peer reads until
/// the second, and the others' shares in the second, which their owners read in the first. The
/// shares are stored as rank 0 chose for every rank (Stores), plain or streamed at any size.
/// Rank 0's measured choice, for every rank, between the eager all-reduce in pieces (way 0) and
/// the table's next algorithm after it (way 1: Rabenseifner's or the ring) for calls on plain
/// buffers that the shm all-reduce hands over, one per placement and rank count. Which is faster
/// is the machine's: two ranks' in-place calls of 2-8 MiB ran at 1.05-1.97x mpi_best by the
/// eager path on the AMD EPYC guest of perftests/HISTORY.md against 0.74-1.23x by the others,
/// and 0.92-0.93x against the ring's and Rabenseifner's 0.97-1.01x on the Intel Xeon guest of
/// perftests/README.md, where out of place at 512 KiB-8 MiB the ring ran 1.36-1.47x against
/// eager's 1.16-1.24x. Whole calls are timed, so one slowed by other work counts as at most
/// twice its way's figure. A way's first call after the other's ran 1.3-1.7x as long as its next
/// ones there, so a trial runs three calls, the last of which counts, each trial is taken to lose
/// a call's time besides, and a way must be 5% faster to be taken. Not made where the call names
/// its algorithm.
MeasuredChoice& takeover_or_runner_up_choice(bool in_place, int ranks) {
  static std::deque<MeasuredChoice> choices = [] {
    std::deque<MeasuredChoice> each;
    for (int kind = 0; kind < 2 * (EagerMailbox::kMaxRanks + 1); ++kind) {
      each.emplace_back(MeasuredChoice::Settings{.latest_piece_weight = 0.25,
                                                 .pieces_lost_switching = 1,
                                                 .switch_margin = 0.05,
                                                 .largest_piece_over_figure = 2.0,
                                                 .trial_run = 3});
    }
    return each;
  }();
  const int capped = std::clamp(ranks, 0, EagerMailbox::kMaxRanks);
  return choices[static_cast<std::size_t>(2 * capped + (in_place ? 1 : 0))];
}

class ShmAllReduce final : public ShmAlgorithmOf<CollectiveKind::all_reduce> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const int rank = comm.rank();
    const int size = comm.size();
    const std::size_t element = size_of(args.output.type);
    // Rank 0 times its own work in both phases for the choice of stores it made for all.
    auto spent = std::make_shared<std::chrono::steady_clock::duration>();
    auto reduce_own_share = [args, rank, size, element, spent](const PeerMemory& memory) {
      const auto began = std::chrono::steady_clock::now();
      const Block share = block_of(args.output.count, size, rank);
      sum_blocks(byte_offset(args.output.data, share.offset * element), blocks_at(memory, rank, share.offset * element),
                 share.count, args, memory.peer_read_stores);
      if (rank == 0) *spent = std::chrono::steady_clock::now() - began;
    };
    auto copy_other_shares = [args, rank, size, element, spent](const PeerMemory& memory) {
      const auto began = std::chrono::steady_clock::now();
      for (int owner = 0; owner < size; ++owner) {
        const Block share = block_of(args.output.count, size, owner);
        if (owner == rank || share.count == 0) continue;
        const std::size_t offset = share.offset * element;
        copy_host_bytes(byte_offset(args.output.data, offset), memory.outputs[static_cast<std::size_t>(owner)] + offset,
                        share.count * element, args.output.bytes());
      }
      if (rank == 0) {
        record_peer_read_stores(args, memory.peer_read_stores,
                                *spent + (std::chrono::steady_clock::now() - began));
      }
    };
    RankZeroChoices choices;
    if (!args.algorithm_named) choices.takeover_or_runner_up = &takeover_or_runner_up_choice(args.in_place, size);
    return SingleCopySchedule::start(comm, args, *this, PeerOutputs::read, choices, reduce_own_share,
                                     copy_other_shares);
  }
};

/// Rank 0's measured choice, for every rank, between the shm all-to-all's two phases in place
/// (way 0) and the call's takeover (way 1; the eager path's swaps between the pairs of ranks at
/// two to four ranks) where every rank's buffer is shared: which is faster is the machine's. On
/// the AMD EPYC guest of perftests/HISTORY.md `shm` was ahead at 11 of 12 such points; on the
/// Intel Xeon guest of perftests/README.md the swaps ran 1.35-2.34x mpi_best at 1-16 MiB at two
/// and three ranks, `shm` 0.81-1.47x. Whole calls are timed, so one slowed by other work counts
/// as at most twice its way's figure. Not taken where the call names its algorithm.
MeasuredChoice& in_place_takeover_choice() {
  static MeasuredChoice choice(MeasuredChoice::Settings{.latest_piece_weight = 0.25, .largest_piece_over_figure = 2.0});
  return choice;
}

/// Out of place, every rank copies its block of each peer's input into the peer's place in its
/// output: one phase. In place a rank's buffer holds blocks its peers have yet to read, so it
/// takes two: every rank first copies its block of each peer's buffer into scratch; once all
/// have, each copies the scratch into its own buffer. A copy more than out of place, but no
/// messages and no rank waiting on its neighbours step by step as pairwise's in-place trades do;
/// where the swaps that take it over run faster, rank 0 hands the call to them for every rank
/// (in_place_takeover_choice()).
class ShmAllToAll final : public ShmAlgorithmOf<CollectiveKind::all_to_all> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t block = args.input.bytes() / static_cast<std::size_t>(comm.size());
    const std::size_t from = block * static_cast<std::size_t>(comm.rank());
    void* output = args.output.data;
    const std::size_t output_bytes = args.output.bytes();
    if (!args.in_place) {
      return SingleCopySchedule::start(
          comm, args, *this, PeerOutputs::unread, {},
          [output, block, from, output_bytes](const PeerMemory& memory) {
            for (std::size_t peer = 0; peer < memory.inputs.size() && block > 0; ++peer) {
              copy_into_own_result(byte_offset(output, peer * block), memory.inputs[peer] + from, block,
                                   {.output_bytes = output_bytes});
            }
          });
    }
    // Shared by the two phases; the first takes the scratch, the second hands it back. It holds
    // the peers' blocks in rank order, without this rank's own. The staging copies plainly: its
    // blocks are read back straight after. With both phases streamed from a 32 MiB output, as
    // the other copies are, this ran at 0.82x mpi_best on shared buffers at 32 MiB on an Intel
    // Xeon VM (two launches each of `alltoall_perf --buffers shared -b 16M -e 64M -f 2`), plain
    // at 0.97-1.01x, and 2.55-2.58x against 2.71-2.81x at 64 MiB. The blocks written into this
    // rank's buffer replace lines its peers have just read, and which stores do that faster
    // depends on the machine's state: they are measured (copy_into_peer_memory). On the AMD EPYC
    // VM of perftests/HISTORY.md plain ones ran two ranks' calls at 2-16 MiB at 0.52-0.63x
    // mpi_best, the measured ones at 1.04-1.87x (two alternated launches each, 2026-11-30).
    auto staged = std::make_shared<std::shared_ptr<std::byte[]>>();
    const auto rank = static_cast<std::size_t>(comm.rank());
    const std::size_t peers = static_cast<std::size_t>(comm.size()) - 1;
    auto staged_at = [block, rank](std::byte* scratch, std::size_t peer) {
      return scratch + (peer < rank ? peer : peer - 1) * block;
    };
    auto stage_peer_blocks = [&comm, staged, staged_at, block, from, rank, peers](const PeerMemory& memory) {
      if (block == 0) return;
      *staged = comm.scratch().acquire(peers * block);
      for (std::size_t peer = 0; peer < memory.inputs.size(); ++peer) {
        if (peer == rank) continue;
        plain_copy(staged_at(staged->get(), peer), memory.inputs[peer] + from, block);
      }
    };
    auto unstage_into_own_buffer = [staged, staged_at, output, block, rank](const PeerMemory& memory) {
      if (block == 0) return;
      for (std::size_t peer = 0; peer < memory.inputs.size(); ++peer) {
        if (peer == rank) continue;
        copy_into_peer_memory(byte_offset(output, peer * block), staged_at(staged->get(), peer), block,
                              PeerReadCopy::in_place_result);
      }
      staged->reset();
    };
    RankZeroChoices choices;
    if (!args.algorithm_named) choices.phases_or_takeover = &in_place_takeover_choice();
    return SingleCopySchedule::start(comm, args, *this, PeerOutputs::unread, choices, stage_peer_blocks,
                                     unstage_into_own_buffer);
  }
};

/// Every rank copies the root's buffer into its own. As for the others, it runs where every
/// rank's buffer is shared (all ranks decide alike from the same descriptors), else hands over.
class ShmBroadcast final : public ShmAlgorithmOf<CollectiveKind::broadcast> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t bytes = args.output.bytes();
    const int root = args.root;
    const bool receives = comm.rank() != root;
    void* output = args.output.data;
    return SingleCopySchedule::start(
        comm, args, *this, PeerOutputs::unread, {}, [output, bytes, root, receives](const PeerMemory& memory) {
          // Every rank reads the root's buffer at once, where a tree passes it on in log2(P)
          // dependent steps; the closing barrier keeps the root's buffer untouched until all have.
          if (receives && bytes > 0) {
            copy_into_own_result(output, memory.inputs[static_cast<std::size_t>(root)], bytes, {.output_bytes = bytes});
          }
        });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_shm_all_gather() { return std::make_unique<ShmAllGather>(); }
std::unique_ptr<Algorithm> make_shm_reduce_scatter() { return std::make_unique<ShmReduceScatter>(); }
std::unique_ptr<Algorithm> make_shm_all_reduce() { return std::make_unique<ShmAllReduce>(); }
std::unique_ptr<Algorithm> make_shm_broadcast() { return std::make_unique<ShmBroadcast>(); }
std::unique_ptr<Algorithm> make_shm_all_to_all() { return std::make_unique<ShmAllToAll>(); }

}  // namespace meshcomm::detail
