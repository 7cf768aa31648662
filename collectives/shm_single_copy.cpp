// Single-copy collectives through shared memory, for ranks that are processes on one node.
//
// Each rank first tells the others where its input lives: through the communicator's eager
// slots where it has them (an all-gather of the descriptors, a fraction of a microsecond), else
// by messages (2-3 us at two ranks on mpi). When every rank's input is in a
// meshcomm shared segment (Communicator::allocate_shared) and all ranks are on one host, each
// rank reads its peers' inputs straight from their memory: one copy per byte, no staging, no
// network stack. A closing barrier keeps every input untouched until all peers have read it.
// Otherwise every rank hands the call over to the algorithm the selection table names next (the
// pairwise exchange at 3-9 ranks, the ring, or recursive halving's reduce-scatter from 16 ranks
// below 16 MiB, the binomial tree for a broadcast; never `native`, whose MPI
// collective, started from this operation's progress, could be ordered differently on different
// ranks against later ones); they all see the same descriptors, so they all decide alike, and a
// rank whose own input is not shared starts the takeover without waiting for the others'
// descriptors.

#include <cstring>
#include <string>
#include <vector>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "call_record.hpp"
#include "collective_engine.hpp"
#include "dissemination_barrier.hpp"
#include "internal_p2p.hpp"
#include "recycled_allocation.hpp"
#include "reduction.hpp"
#include "shared_memory/shared_segment.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::detail {

namespace {

/// Where one rank's input lives, as the other ranks need to know it.
struct RegionDescriptor {
  std::uint64_t host = 0;
  SegmentReference segment;  ///< empty: the input is not in a shared segment
};

RegionDescriptor describe(CommunicatorImpl& comm, const void* data, std::size_t bytes) {
  RegionDescriptor descriptor;
  descriptor.host = host_identity();
  if (auto location = comm.shared_memory().locate(data, bytes)) descriptor.segment = SegmentReference::of(*location);
  return descriptor;
}

/// Every rank's descriptor, in rank order: up to 16 ranks cost no malloc (recycled_allocation.hpp).
using Descriptors = std::vector<RegionDescriptor, ShortListAllocator<RegionDescriptor, 16>>;

/// The in-place all-gather of every rank's descriptor into `descriptors`, for the eager slots.
CollectiveArgs descriptor_exchange(Descriptors& descriptors, int rank, OperationLabel label) {
  const std::size_t bytes = sizeof(RegionDescriptor);
  return {.kind = CollectiveKind::all_gather,
          .input = {&descriptors[static_cast<std::size_t>(rank)], bytes, DataType::u8, MemoryKind::host},
          .output = {descriptors.data(), bytes * descriptors.size(), DataType::u8, MemoryKind::host},
          .in_place = true,
          .label = label};
}

/// The steps every single-copy collective shares: exchange descriptors, then either copy from
/// the peers' memory and close with a barrier, or hand the call over.
class SingleCopySchedule {
 public:
  /// `copy(peer_inputs)` does this rank's local work given each rank's input address; `self`,
  /// the algorithm calling, is the one the call is handed over from: its successor is chosen,
  /// and its tags reserved, as the operation starts (tags must be reserved in issue order on
  /// every rank). `Copy` is a callable of `const std::vector<const std::byte*>&`, kept only
  /// where the copy may happen (a rank whose own input is shared).
  template <class Copy>
  static std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args, const Algorithm& self,
                                          Copy copy) {
    const int size = comm.size();
    const void* input = args.input.data;
    const auto label = args.label;
    auto descriptors = make_recycled<Descriptors>(static_cast<std::size_t>(size));
    (*descriptors)[comm.rank()] = describe(comm, input, args.input.bytes());
    // The eager exchange starts now, as the call is made, like every eager operation; the ranks
    // compare this call's record in it, so ones that disagree about the call fail alike.
    std::shared_ptr<WorkState> eager_exchange;
    const bool exchange_eagerly = comm.eager_mailbox() != nullptr;
    if (exchange_eagerly) {
      eager_exchange = start_eager(comm, descriptor_exchange(*descriptors, comm.rank(), label), CallRecord::of(args),
                                   descriptors);
    }
    const int tag = exchange_eagerly ? 0 : comm.reserve_internal_tags(1);
    const int barrier_tag = comm.reserve_internal_tags(1);
    const Algorithm& takeover = comm.collectives().takeover_for(comm, args, self);
    const int takeover_tag = comm.reserve_internal_tags(takeover.takeover_tags());
    auto hand_over = [&comm, args, &takeover, takeover_tag] { return takeover.start_on_tags(comm, args, takeover_tag); };
    const auto timeout = comm.timeout();
    // A rank whose own input is not shared knows the outcome already: it tells the others and
    // hands the call over at once, without waiting to hear from them.
    const bool falls_back_anyway = (*descriptors)[comm.rank()].segment.empty();
    if (falls_back_anyway && exchange_eagerly) {
      // The common case of buffers a trainer already has: the eager exchange (which keeps the
      // descriptors) and the takeover side by side, with no schedule around them.
      WorkList works;
      if (eager_exchange) works.emplace_back(std::move(eager_exchange), timeout);
      if (auto state = hand_over()) works.emplace_back(std::move(state), timeout);
      if (works.empty()) return nullptr;
      return make_recycled<GroupWorkState>(std::move(works));
    }
    return make_schedule(2, [&comm, descriptors, input, label, tag, barrier_tag, timeout,
                                              falls_back_anyway, eager_exchange = std::move(eager_exchange),
                                              exchange_eagerly, copy = std::move(copy), hand_over](int step) {
      WorkList works;
      const int rank = comm.rank();
      if (step == 0) {
        works.reserve(2 * static_cast<std::size_t>(comm.size()) - 1);  // descriptors both ways, and a takeover
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
        if (falls_back_anyway) {
          if (auto state = hand_over()) works.emplace_back(std::move(state), timeout);
        }
        return works;
      }
      if (falls_back_anyway) return works;
      bool all_shared = true;
      for (const auto& descriptor : *descriptors) {
        all_shared = all_shared && !descriptor.segment.empty() && descriptor.host == (*descriptors)[rank].host;
      }
      if (!all_shared) {
        if (auto state = hand_over()) works.emplace_back(std::move(state), timeout);
        return works;
      }
      std::vector<const std::byte*> inputs;
      for (int peer = 0; peer < comm.size(); ++peer) {
        const auto location = (*descriptors)[peer].segment.location();
        inputs.push_back(peer == rank ? static_cast<const std::byte*>(input)
                                      : comm.shared_memory().map_peer(location.handle) + location.offset);
      }
      copy(inputs);
      works.emplace_back(start_dissemination_barrier(comm, label, barrier_tag), timeout);
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
        comm, args, *this, [args, block, rank](const std::vector<const std::byte*>& inputs) {
          // The copies stream when the whole output outgrows the cache, in place too: at 16 MiB
          // in place (8 MiB copied per rank) that ran 2.2-2.5x Open MPI against 1.7x plain.
          const std::size_t output_bytes = block * inputs.size();
          for (std::size_t peer = 0; peer < inputs.size(); ++peer) {
            if (static_cast<int>(peer) == rank && args.in_place) continue;
            if (block > 0) {
              copy_host_bytes(byte_offset(args.output.data, peer * block), inputs[peer], block, output_bytes);
            }
          }
        });
  }
};

class ShmReduceScatter final : public ShmAlgorithmOf<CollectiveKind::reduce_scatter> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t block = args.output.bytes();
    const int rank = comm.rank();
    const int size = comm.size();
    return SingleCopySchedule::start(
        comm, args, *this, [args, block, rank, size](const std::vector<const std::byte*>& inputs) {
          // Start from this rank's own input: in place, the output is that very memory, so it
          // must be read before anything is written over it.
          const auto count = args.output.count;
          if (count == 0) return;
          auto block_of_rank = [&](int peer) { return inputs[(rank + peer) % size] + rank * block; };
          if (size == 1) {
            if (!args.in_place) std::memcpy(args.output.data, block_of_rank(0), block);
          } else if (!args.in_place && block >= streaming_copy_threshold()) {
            // An output this large leaves the cache: sums streamed out write each line once
            // (memory_floor_perf --collective reduce_scatter: 0.87-0.89 of the floor at 64 MiB
            // with plain stores, whose kernel streamed). In place the output is the rank's own
            // input block, read just before: plain stores find it cached.
            std::vector<const void*> blocks(static_cast<std::size_t>(size));
            for (int peer = 0; peer < size; ++peer) blocks[static_cast<std::size_t>(peer)] = block_of_rank(peer);
            reduce_streaming(args.output.data, blocks, count, args.output.type, args.op);
          } else {
            reduce_pair(args.output.data, block_of_rank(0), block_of_rank(1), count, args.output.type, args.op);
            for (int peer = 2; peer < size; ++peer) {
              reduce_into(args.output.data, block_of_rank(peer), count, args.output.type, args.op);
            }
          }
          if (args.op == ReduceOp::avg) divide_for_average(args.output.data, count, args.output.type, size);
        });
  }
};

/// Out of place, every rank copies its block of each peer's input into the peer's place in its
/// output. In place a rank would overwrite blocks its peers have yet to read: every rank hands
/// those calls at once to the algorithm a plain buffer would get.
class ShmAllToAll final : public ShmAlgorithmOf<CollectiveKind::all_to_all> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    if (args.in_place) return comm.collectives().takeover_for(comm, args, *this).start(comm, args);
    const std::size_t block = args.input.bytes() / static_cast<std::size_t>(comm.size());
    const std::size_t from = block * static_cast<std::size_t>(comm.rank());
    void* output = args.output.data;
    return SingleCopySchedule::start(
        comm, args, *this, [output, block, from](const std::vector<const std::byte*>& inputs) {
          if (block == 0) return;
          for (std::size_t peer = 0; peer < inputs.size(); ++peer) {
            copy_host_bytes(byte_offset(output, peer * block), inputs[peer] + from, block, block * inputs.size());
          }
        });
  }
};

/// Every rank copies the root's buffer into its own. As for the other two, it runs where every
/// rank's buffer is shared (all ranks decide alike from the same descriptors), else hands over.
class ShmBroadcast final : public ShmAlgorithmOf<CollectiveKind::broadcast> {
 public:
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    const std::size_t bytes = args.output.bytes();
    const int root = args.root;
    const bool receives = comm.rank() != root;
    void* output = args.output.data;
    return SingleCopySchedule::start(
        comm, args, *this, [output, bytes, root, receives](const std::vector<const std::byte*>& inputs) {
          // Every rank reads the root's buffer at once, where a tree passes it on in log2(P)
          // dependent steps; the closing barrier keeps the root's buffer untouched until all have.
          if (receives && bytes > 0) copy_host_bytes(output, inputs[static_cast<std::size_t>(root)], bytes, bytes);
        });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_shm_all_gather() { return std::make_unique<ShmAllGather>(); }
std::unique_ptr<Algorithm> make_shm_reduce_scatter() { return std::make_unique<ShmReduceScatter>(); }
std::unique_ptr<Algorithm> make_shm_broadcast() { return std::make_unique<ShmBroadcast>(); }
std::unique_ptr<Algorithm> make_shm_all_to_all() { return std::make_unique<ShmAllToAll>(); }

}  // namespace meshcomm::detail
