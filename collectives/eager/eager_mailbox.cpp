#include "eager_mailbox.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <span>

#include <fmt/format.h>

#include "communicator_impl.hpp"
#include "eager_all_to_allv.hpp"
#include "host_cores.hpp"
#include "meshcomm/error.hpp"
#include "plain_copy.hpp"
#include "process_memory.hpp"
#include "reduction.hpp"
#include "setup_exchange.hpp"
#include "shared_memory/page_prefault.hpp"
#include "shared_memory/shared_segment.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::detail {

namespace {

constexpr std::size_t kCacheLine = 64;  // the finished counter on a cache line of its own
// The stores' decision table follows it, then the slots.
constexpr std::size_t kTableAt = kCacheLine;
constexpr std::size_t kSlotsAt = kTableAt + EagerStoreChoice::kTableBytes;
static_assert(EagerStoreChoice::kTableBytes % kCacheLine == 0);
// A header: its first cache line holds the sequence word, the call's record without its site
// and, for a payload that fits, the payload itself, so that a reader of a small call moves one
// line; the site (under MESHCOMM_DEBUG=callsite only) follows on the next line. A slot holds
// kHeadersPerSlot headers, then the payload bytes of larger payloads. A larger payload leaves the
// inline bytes free: their first word is an all_to_allv's (a two-rank short table, whose block
// lies in the payload bytes, or what says that the table lies there too: kAllToAllvPastInline;
// a compact table takes all the inline bytes), the next says where its readers read it: 0 for
// the slot, else
// the address in the writer's process of the buffer they copy from (PayloadWay::read_from_writer),
// and where its writing is timed (EagerStoreChoice), the third how long that took, in nanoseconds.
constexpr std::size_t kRecordAt = 8;
constexpr std::size_t kRecordCoreBytes = offsetof(CallRecord, site);
constexpr std::size_t kInlineAt = kRecordAt + kRecordCoreBytes;
constexpr std::size_t kInlineBytes = kCacheLine - kInlineAt;
constexpr std::size_t kSiteAt = kCacheLine;
constexpr std::size_t kHeader = 2 * kCacheLine;
static_assert(kInlineAt < kCacheLine && kSiteAt + sizeof(CallRecord::site) <= kHeader);
static_assert(kRecordCoreBytes + sizeof(CallRecord::site) == sizeof(CallRecord), "the site ends the record");
static_assert(std::has_unique_object_representations_v<CallRecord>, "records are compared bytewise");
constexpr std::size_t kHeadersBytes = EagerMailbox::kHeadersPerSlot * kHeader;
constexpr std::size_t kSlotStride = kHeadersBytes + EagerMailbox::kPayloadBytes;
constexpr std::size_t kSegmentBytes = kSlotsAt + EagerMailbox::kSlots * kSlotStride;
constexpr std::size_t kAllToAllvFormAt = kInlineAt;
constexpr std::size_t kWriterBufferAt = kAllToAllvFormAt + sizeof(std::uint64_t);
constexpr std::size_t kWritingTookAt = kWriterBufferAt + sizeof(std::uint64_t);
static_assert(kWritingTookAt + sizeof(std::uint64_t) <= kCacheLine);
static_assert(kHeadersBytes - kAllToAllvFormAt <= 0xffff, "a short table says where its block starts in two bytes");
// A payload left in its writer's buffer is not timed, so the word of its writing's time says
// instead whether the buffer lies in a shared segment (Communicator::allocate_shared); the
// segment's reference then ends the slot, whose payload bytes such a payload does not use but for
// an all_to_allv's table at their start. The readers copy it through their own mapping of the
// segment, with loads, as the shm path reads: a kernel copy of shared memory ran slower than of
// plain memory on the 2-core VM (perftests/HISTORY.md).
constexpr std::uint64_t kInSharedSegment = 1;
constexpr std::size_t kSegmentReferenceAt = kSlotStride - sizeof(SegmentReference);
static_assert(kSegmentReferenceAt % alignof(SegmentReference) == 0);

/// The blocks in which a broadcast root compares its payload with what its slot holds.
constexpr std::size_t kComparedBlock = 4096;

/// Stores a broadcast root's `bytes` at `from` into its slot's `payload` with `store`, but for
/// the leading blocks the slot already holds; `start` is how the slot's payload starts, as this
/// rank last stored it, and becomes how this one starts. A root that sends what it sent when it
/// last used the slot (weights loaded long before, buffers no step changes, a value every step
/// repeats) then stores nothing, and its readers copy lines their own caches kept from that call,
/// where the root's stores would have taken those lines from them first. New data starts unlike
/// `start` and goes in one store without a load of the slot: on the 2-core Intel VM of
/// perftests/HISTORY.md a first compared block cost a 4 KiB broadcast of new data 0.16 us, the
/// slot's first line coming from its reader's core, and stores of 4 KiB each ran one of 256 KiB
/// 1.45x slower than one store.
template <class Store>
void store_unless_held(std::byte* payload, const std::byte* from, std::size_t bytes, HeldPayloadStart& start,
                       Store& store) {
  const std::size_t known = std::min(bytes, start.bytes.size());
  std::size_t held = 0;
  if (start.count == known && std::memcmp(start.bytes.data(), from, known) == 0) {
    while (held < bytes) {
      const std::size_t block = std::min(kComparedBlock, bytes - held);
      if (std::memcmp(payload + held, from + held, block) != 0) break;
      held += block;
    }
  }
  if (held < bytes) store(payload + held, from + held, bytes - held);
  std::memcpy(start.bytes.data(), from, known);
  start.count = known;
}

std::uint64_t load_acquire(const std::byte* word) noexcept {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(word)))
      .load(std::memory_order_acquire);
}

void store_release(std::byte* word, std::uint64_t value) noexcept {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(word)).store(value, std::memory_order_release);
}

/// What a rank tells the others at set-up: its host, where its segment is (empty: none), its
/// process, so that a wait can tell a rank that has ended from a slow one and a peer may read its
/// memory (from its probe word on), and the cores it may run on.
struct Descriptor {
  std::uint64_t host = 0;
  SegmentReference segment;
  ProcessIdentity process;
  std::uint64_t probe_address = 0;
  CoreSet cores;
};

/// What a rank tells the others once it has tried their segments and processes, with its
/// MESHCOMM_EAGER_PEER_READS (a PeerReads) in the bits from kPeerReadsShift on.
enum SetUpFlags : std::uint8_t {
  kMappedEverySegment = 1,
  kReadsEveryProcess = 2,  ///< it may read every peer's memory (PayloadWay::read_from_writer)
};
constexpr int kPeerReadsShift = 2;

/// The setting of MESHCOMM_EAGER_PEER_READS as a rank's set-up flags carry it.
PeerReads peer_reads_of(std::byte flags) noexcept {
  return static_cast<PeerReads>(static_cast<std::uint8_t>(flags) >> kPeerReadsShift);
}

/// Throws unless every rank's `agreed` flags carry the same MESHCOMM_EAGER_PEER_READS: which
/// calls the path takes hangs on it (EagerMailbox::takes), so ranks that differ would pick
/// different algorithms for one call.
void require_one_peer_reads_setting(std::span<const std::byte> agreed, int self, const ErrorContext& context) {
  const PeerReads mine = peer_reads_of(agreed[static_cast<std::size_t>(self)]);
  for (std::size_t rank = 0; rank < agreed.size(); ++rank) {
    const PeerReads theirs = peer_reads_of(agreed[rank]);
    if (theirs == mine) continue;
    ErrorContext named = context;
    named.peer = static_cast<int>(rank);
    throw Error(ErrorCode::invalid_argument,
                fmt::format("MESHCOMM_EAGER_PEER_READS is '{}' on rank {} but '{}' on rank {}; every rank must "
                            "set it alike (or none)",
                            to_string(mine), self, to_string(theirs), rank),
                named);
  }
}

std::vector<std::byte*> tables_of(const std::vector<std::byte*>& bases) {
  std::vector<std::byte*> tables;
  for (auto* base : bases) tables.push_back(base + kTableAt);
  return tables;
}

std::uint64_t elapsed_nanoseconds(std::chrono::steady_clock::time_point since) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

bool has_site(const CallRecord& record) noexcept { return record.site[0] != '\0'; }

bool on_backend_with_host_memory(BackendKind kind) noexcept {
  return kind == BackendKind::mpi || kind == BackendKind::ucx || kind == BackendKind::inproc;
}

}  // namespace

std::shared_ptr<EagerMailbox> EagerMailbox::create(CommunicatorImpl& comm, OperationLabel label) {
  const int size = comm.size();
  if (size < 2 || size > kMaxRanks || !on_backend_with_host_memory(comm.backend_kind())) return nullptr;
  // The slots are only ever read and written by the ranks' own loads and stores, never by the
  // backend's engine: POSIX shared memory on every backend, in segments of the mailbox's own.
  // On ucx, slots in memory UCX allocated (sysv) made a 1 KiB all-reduce 3-16% slower than on
  // mpi in 3 of 5 alternated launches; in POSIX memory both backends were within 5%.
  auto segments = std::make_shared<SharedMemoryRegistry>(make_posix_segments());
  std::shared_ptr<SharedSegment> own;
  Descriptor mine;
  mine.host = host_identity();
  mine.process = ProcessIdentity::of_this_process();
  mine.cores = CoreSet::of_this_process();
  const PeerReads peer_reads = peer_reads_from_environment();
  if (peer_reads != PeerReads::never) allow_peers_to_read_this_process();
  mine.probe_address = memory_probe_address();
  try {
    own = segments->create(kSegmentBytes);
    // The counters and slot headers start at zero whatever memory a segment comes from. The
    // payloads are written here too, and every peer's segment read once mapped (below), so that
    // no call takes the page faults of a slot's first use at a size, on the writer's side and on
    // each reader's. At two ranks on the AMD EPYC guest (2026-12-03, `alltoallv_perf -b 6K -e 6K
    // -n 10 -w 2 --repeat 12`, three alternated launches each) the first block of ten calls took
    // 21.5-27.2 us a call and the next five up to 7.1, against 1.4 once warm; prefaulted, the
    // first took 1.4-1.5. In the perftests' short blocks (`-b 1K -e 64K -f 4 -n 10 -w 2 --repeat
    // 5`, three alternated launches) the all-to-allv of 48 KiB ran 0.36-0.87x `mpi_best`, the
    // all-gather of 64 KiB 0.45-0.74x and the all-to-all in place 0.32-0.63x without it, and
    // 1.14-1.47x, 1.23-1.88x and 2.63-3.69x with it.
    std::memset(own->base(), 0, kSegmentBytes);
    mine.segment = SegmentReference::of({.handle = own->handle(), .offset = 0});
  } catch (const Error&) {
    own.reset();  // no eager path on this communicator: the others learn it from the empty reference
  }
  const auto gathered = exchange_all_gather(comm, std::as_bytes(std::span(&mine, 1)), label);
  std::vector<Descriptor> all(static_cast<std::size_t>(size));
  std::memcpy(all.data(), gathered.data(), gathered.size());
  for (const auto& descriptor : all) {
    if (descriptor.segment.empty() || descriptor.host != mine.host) return nullptr;
  }
  // Every rank has a segment on this host; each must also map all of them, and all must agree.
  // Whether every rank may read every peer's memory is agreed alike.
  std::vector<std::byte*> bases(static_cast<std::size_t>(size), nullptr);
  std::uint8_t flags = kMappedEverySegment | (peer_reads != PeerReads::never ? kReadsEveryProcess : 0) |
                       static_cast<std::uint8_t>(static_cast<std::uint8_t>(peer_reads) << kPeerReadsShift);
  for (int rank = 0; rank < size; ++rank) {
    try {
      bases[rank] = rank == comm.rank() ? own->base() : segments->map_peer(all[rank].segment.location().handle);
    } catch (const Error&) {
      flags &= ~kMappedEverySegment;
    }
    // A peer's memory is probed only where it may be read (a thread of this process always may).
    const auto& process = all[rank].process;
    if ((flags & kReadsEveryProcess) != 0 && process.pid != mine.process.pid &&
        !can_read_process(process.pid, all[rank].probe_address)) {
      flags &= ~kReadsEveryProcess;
    }
  }
  for (int rank = 0; rank < size; ++rank) {
    // Its owner wrote it before the first gather above.
    if (rank != comm.rank()) prefault_for_reading(bases[rank], kSegmentBytes);
  }
  const auto agreed = exchange_all_gather(comm, std::as_bytes(std::span(&flags, 1)), label);
  // Every peer has tried to map it by now: a process that dies leaves no segment behind.
  if (own) own->unpublish();
  require_one_peer_reads_setting(agreed, comm.rank(), comm.context(label));
  bool every_rank_reads = true;
  for (auto each : agreed) {
    if ((static_cast<std::uint8_t>(each) & kMappedEverySegment) == 0) return nullptr;
    every_rank_reads = every_rank_reads && (static_cast<std::uint8_t>(each) & kReadsEveryProcess) != 0;
  }
  std::vector<ProcessIdentity> processes;
  std::vector<CoreSet> cores;
  for (const auto& descriptor : all) {
    processes.push_back(descriptor.process);
    cores.push_back(descriptor.cores);
  }
  return std::make_shared<EagerMailbox>(std::move(segments), std::move(own), std::move(bases),
                                        RankProcesses(std::move(processes)), comm.rank(), comm.context(label),
                                        ranks_outnumber_cores(cores), every_rank_reads ? peer_reads : PeerReads::never,
                                        comm.shared_memory().shared_from_this());
}

EagerMailbox::EagerMailbox(std::shared_ptr<SharedMemoryRegistry> segments, std::shared_ptr<SharedSegment> own,
                           std::vector<std::byte*> bases, RankProcesses processes, int rank, ErrorContext where,
                           bool ranks_share_cores, PeerReads peer_reads,
                           std::shared_ptr<SharedMemoryRegistry> shared_buffers)
    : segments_(std::move(segments)),
      shared_buffers_(std::move(shared_buffers)),
      own_(std::move(own)),
      bases_(std::move(bases)),
      rank_(rank),
      size_(static_cast<int>(bases_.size())),
      processes_(std::move(processes)),
      where_(std::move(where)),
      all_to_allv_capacity_(all_to_allv_capacity(size_, ranks_share_cores, kPayloadBytes)),
      stores_(tables_of(bases_), rank, kSlots, streaming_stores_are_measured(), ranks_share_cores, peer_reads,
              all_to_allv_capacity_),
      lend_shared_broadcasts_from_(shared_broadcast_lending_threshold(peer_reads, ranks_share_cores)),
      forecast_(all_to_allv_capacity_),
      peers_finished_(bases_.size(), 0) {
  last_whole_payload_.fill(-1);
  // A rank whose payload its peers read from its buffer finishes only once they have: they must
  // read it even while blocked in another wait, as MPI's progress rule has it (progress_hooks.hpp).
  if (peer_reads != PeerReads::never) {
    progress_hook_ = std::make_unique<ProgressHook>([this] {
      std::unique_lock hold(lock_, std::try_to_lock);
      if (!hold.owns_lock() || pending_.empty()) return;
      try {
        progress();
      } catch (...) {
        // Only an allocation can fail here; the operation's own test meets the same state again.
      }
    });
  }
}

EagerMailbox::~EagerMailbox() = default;

std::size_t EagerMailbox::published_bytes(const CollectiveArgs& args) const noexcept {
  switch (args.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_to_all: return args.input.bytes();
    case CollectiveKind::broadcast: return args.output.bytes();
    case CollectiveKind::all_to_allv:
      if (const std::size_t compact = compact_all_to_allv_bytes(args, rank_, kInlineBytes); compact != 0) {
        return compact;
      }
      return all_to_allv_published_bytes(args, rank_, all_to_allv_capacity_);
  }
  return std::numeric_limits<std::size_t>::max();
}

bool EagerMailbox::takes(const CollectiveArgs& args) const noexcept {
  const std::size_t bytes = published_bytes(args);
  if (bytes <= kPayloadBytes || in_pieces(args)) return true;
  // Every rank's rule gives the same answer for these kinds: their sizes are alike on every rank,
  // and the mode and whether the ranks share cores were agreed as the slots were set up.
  const bool alike_everywhere = args.kind == CollectiveKind::all_gather || args.kind == CollectiveKind::all_to_all;
  return alike_everywhere && stores_.reads_from_writer(args, bytes);
}

bool EagerMailbox::own_block_unpublished(const CollectiveArgs& args) noexcept {
  // A reduce-scatter in place writes its output over its own block while it still reduces the
  // peers' blocks into it, so there the slot keeps the block.
  return args.kind == CollectiveKind::all_to_all || (args.kind == CollectiveKind::reduce_scatter && !args.in_place);
}

std::byte* EagerMailbox::slot(int rank, std::int64_t op) const noexcept {
  return bases_[rank] + kSlotsAt + static_cast<std::uint64_t>(op) % kSlots * kSlotStride;
}

std::byte* EagerMailbox::header(int rank, std::int64_t op) const noexcept {
  return slot(rank, op) + static_cast<std::uint64_t>(op) / kSlots % kHeadersPerSlot * kHeader;
}

inline EagerMailbox::Place EagerMailbox::place(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  if (bytes <= kInlineBytes) return Place::header;
  const bool shares = bytes <= kPayloadShareBytes && args.kind != CollectiveKind::all_to_allv && !stores_.chooses(bytes);
  return shares ? Place::share : Place::whole;
}

inline std::byte* EagerMailbox::payload(int rank, std::int64_t op, Place place) const noexcept {
  const auto turn = static_cast<std::uint64_t>(op) / kSlots % kHeadersPerSlot;  // the header's, and its share's
  if (place == Place::header) return slot(rank, op) + turn * kHeader + kInlineAt;
  return slot(rank, op) + kHeadersBytes + (place == Place::share ? turn * kPayloadShareBytes : 0);
}

std::size_t EagerMailbox::held_start_index(std::int64_t op, Place place) noexcept {
  const auto share = place == Place::share ? static_cast<std::uint64_t>(op) / kSlots % kHeadersPerSlot : 0;
  return static_cast<std::size_t>(static_cast<std::uint64_t>(op) % kSlots * kHeadersPerSlot + share);
}

inline std::int64_t EagerMailbox::last_user(std::int64_t op, Place place) const noexcept {
  switch (place) {
    case Place::header: return op - kHeaders;
    case Place::share: return std::max(op - kHeaders, last_whole_payload_[static_cast<std::size_t>(op % kSlots)]);
    case Place::whole: break;
  }
  return op - kSlots;
}

inline bool EagerMailbox::slot_free(std::int64_t op, Place place) const noexcept {
  const std::int64_t last = last_user(op, place);
  if (last < 0) return true;
  if (finished_ <= last) return false;  // this rank still reads that older operation
  return read_everywhere(last);
}

bool EagerMailbox::read_everywhere(std::int64_t op) const noexcept {
  for (int rank = 0; rank < size_; ++rank) {
    if (rank == rank_ || peers_finished_[rank] > op) continue;
    // Loaded only when the last value no longer says so: the peer writes its counter on every
    // call, and reading it on every call moved a cache line between the cores each time.
    peers_finished_[rank] = static_cast<std::int64_t>(load_acquire(bases_[rank]));
    if (peers_finished_[rank] <= op) return false;
  }
  return true;
}

bool EagerMailbox::arrived(int rank, std::int64_t op) const noexcept {
  return static_cast<std::int64_t>(load_acquire(header(rank, op))) == op + 1;
}

bool EagerMailbox::all_arrived(const Operation& operation) const noexcept {
  if (operation.args.kind == CollectiveKind::broadcast) {
    return operation.args.root == rank_ || arrived(operation.args.root, operation.op);
  }
  for (int rank = 0; rank < size_; ++rank) {
    if (rank != rank_ && !arrived(rank, operation.op)) return false;
  }
  return true;
}

bool EagerMailbox::publish(const Operation& operation, std::size_t bytes) noexcept {
  std::byte* mine = header(rank_, operation.op);
  const auto slot_index = static_cast<std::size_t>(operation.op % kSlots);
  const auto& args = operation.args;
  const auto& record = operation.record;
  std::memcpy(mine + kRecordAt, &record, kRecordCoreBytes);
  if (has_site(record)) std::memcpy(mine + kSiteAt, record.site.data(), sizeof record.site);
  const Place place = this->place(args, bytes);
  std::byte* payload = this->payload(rank_, operation.op, place);
  // A small call skips the choice of ways outright: a few calls' worth of nanoseconds in 100. A
  // payload in the inline bytes keeps them, and so its slot; an all_to_allv's table past them
  // chooses, since its blocks may stay in its input even where it publishes the table alone
  // (all_to_allv_fits()).
  const bool beyond_inline = place != Place::header;
  const bool chooses = stores_.chooses(bytes) || args.kind == CollectiveKind::all_to_allv;
  const PayloadWay way =
      beyond_inline && chooses ? stores_.way(args, bytes, operation.op) : PayloadWay::plain_stores;
  const bool stream = way == PayloadWay::streaming_stores;
  auto store = [stream](std::byte* to, const void* from, std::size_t count) {
    if (stream) {
      streaming_copy(to, from, count);
    } else {
      std::memcpy(to, from, count);
    }
  };
  const bool lent = way == PayloadWay::read_from_writer || (beyond_inline && lends_shared_broadcast(args));
  // A payload left in the buffer writes nothing to time: its readers' copies are all it costs.
  const bool timed = bytes >= EagerStoreChoice::kMeasuredFrom && !lent && stores_.times_writing(args, bytes);
  const auto began = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (beyond_inline) {
    const std::uint64_t writer_buffer = lent ? reinterpret_cast<std::uint64_t>(args.input.data) : 0;
    std::memcpy(mine + kWriterBufferAt, &writer_buffer, sizeof writer_buffer);
  }
  const bool hands_over =
      args.kind == CollectiveKind::all_to_allv && beyond_inline && forecast_.hands_over(args, rank_);
  if (args.kind == CollectiveKind::all_to_allv && !beyond_inline) {
    write_compact_all_to_allv(payload, args, rank_);
  } else if (args.kind == CollectiveKind::all_to_allv && way != PayloadWay::read_from_writer && !hands_over &&
             short_all_to_allv_table_fits(args, rank_, all_to_allv_capacity_)) {
    write_short_all_to_allv(mine + kAllToAllvFormAt, static_cast<std::size_t>(payload - (mine + kAllToAllvFormAt)),
                            args, rank_, way);
  } else if (args.kind == CollectiveKind::all_to_allv) {
    mine[kAllToAllvFormAt] = kAllToAllvPastInline;
    write_all_to_allv(payload, args, rank_, all_to_allv_capacity_, way, hands_over);
  } else if (lent) {
    // The readers copy from args.input: nothing more to write but where it lies.
  } else if (own_block_unpublished(args)) {
    // Each peer reads only its own block of this input: this rank's block stays out of the slot
    // (a copy of 1/size of the input less), and finish() takes it from the input.
    const std::size_t block = args.input.bytes() / static_cast<std::size_t>(size_);
    const std::size_t own = static_cast<std::size_t>(rank_) * block;
    const auto* input = static_cast<const std::byte*>(args.input.data);
    store(payload, input, own);
    store(payload + own + block, input + own + block, args.input.bytes() - own - block);
  } else if (args.kind != CollectiveKind::broadcast) {
    store(payload, args.input.data, args.input.bytes());
  } else if (args.root == rank_ && beyond_inline) {
    store_unless_held(payload, static_cast<const std::byte*>(args.output.data), bytes,
                      held_starts_[held_start_index(operation.op, place)], store);
  } else if (args.root == rank_) {
    store(payload, args.output.data, bytes);
  }
  forget_held_starts(operation, place);
  if (place == Place::whole) last_whole_payload_[slot_index] = operation.op;
  if (timed) {
    const std::uint64_t took = elapsed_nanoseconds(began);
    std::memcpy(mine + kWritingTookAt, &took, sizeof took);
  }
  if (lent) describe_lent_buffer(operation.op, args.input.data, args.input.bytes());
  store_release(mine, static_cast<std::uint64_t>(operation.op) + 1);
  return lent;
}

void EagerMailbox::forget_held_starts(const Operation& operation, Place place) noexcept {
  // What a root kept of a share's payload stays true unless this call wrote other bytes there. A
  // payload in the inline bytes (a barrier's, a small call's) leaves the payload bytes as they
  // were; so does a broadcast's reader. A root's payload in the whole payload bytes keeps its
  // start as the first share's (store_unless_held()) and writes over the others; a root that
  // lends its buffer writes where it lies at the slot's end, in a block its next comparison finds
  // changed and stores.
  const auto& args = operation.args;
  if (place == Place::header || (args.kind == CollectiveKind::broadcast && args.root != rank_)) return;
  const bool root = args.kind == CollectiveKind::broadcast;
  if (place == Place::share) {
    if (!root) held_starts_[held_start_index(operation.op, place)].count = 0;
    return;
  }
  const std::size_t first = held_start_index(operation.op, place);
  for (std::size_t share = root ? 1 : 0; share < kHeadersPerSlot; ++share) held_starts_[first + share].count = 0;
}

std::optional<Error> EagerMailbox::disagreement(const Operation& operation) const {
  const auto& record = operation.record;
  const bool from_root_only = operation.args.kind == CollectiveKind::broadcast;
  auto compared = [&](int rank) { return rank != rank_ && (!from_root_only || rank == operation.args.root); };
  // The records are compared where they lie; only a disagreement, which is rare, copies them.
  // The site is there, and compared, only where this rank's calls carry one (callsite mode).
  const bool with_site = has_site(record);
  auto differs = [&](int rank) {
    const std::byte* theirs = header(rank, operation.op);
    return std::memcmp(theirs + kRecordAt, &record, kRecordCoreBytes) != 0 ||
           (with_site && std::memcmp(theirs + kSiteAt, record.site.data(), sizeof record.site) != 0);
  };
  int first_other = -1;
  for (int rank = 0; rank < size_ && first_other < 0; ++rank) {
    if (compared(rank) && differs(rank)) first_other = rank;
  }
  if (first_other < 0) return std::nullopt;
  std::vector<CallRecord> records(static_cast<std::size_t>(size_), record);
  for (int rank = 0; rank < size_; ++rank) {
    if (!compared(rank)) continue;
    const std::byte* theirs = header(rank, operation.op);
    std::memcpy(static_cast<void*>(&records[rank]), theirs + kRecordAt, kRecordCoreBytes);  // its fields before the site
    records[rank].site = {};
    if (with_site) std::memcpy(records[rank].site.data(), theirs + kSiteAt, sizeof record.site);
  }
  ErrorContext context = where_;
  context.operation = operation.args.label.name;
  context.sequence = operation.args.label.sequence;
  context.peer = first_other;
  return Error(ErrorCode::invalid_argument,
               fmt::format("the ranks disagree about this collective: {}; every rank must make the same collective "
                           "calls in the same order",
                           describe_disagreement(records)),
               context);
}

void EagerMailbox::finish(const Operation& operation) {
  const auto& args = operation.args;
  const std::size_t published = published_bytes(args);
  const Place place = this->place(args, published);
  // An all_to_allv's writers each chose their form, whose payloads lie in different places.
  const bool exchanges_v = args.kind == CollectiveKind::all_to_allv;
  auto payload = [&](int rank) -> const std::byte* {
    return exchanges_v ? all_to_allv_payload(rank, operation.op) : this->payload(rank, operation.op, place);
  };
  auto failure = disagreement(operation);
  if (failure) {
    failures_.emplace(operation.op, *failure);
    mark_read(operation.op);
    return;
  }
  // Where `writer` left its payload in its buffer, the buffer's address; else 0 (only payloads
  // beyond the inline bytes may be left there).
  auto writer_buffer = [&](int writer) {
    std::uint64_t address = 0;
    const std::byte* theirs = header(writer, operation.op);
    const bool beyond_inline = exchanges_v ? !all_to_allv_compact(theirs + kInlineAt) : published > kInlineBytes;
    if (beyond_inline) std::memcpy(&address, theirs + kWriterBufferAt, sizeof address);
    return address;
  };
  // Where this rank decides how a peer passes its payloads on, it times its copy of that payload
  // (an all_to_allv's decider may read a large block from its writer while it publishes little),
  // out of the slot or out of the writer's buffer, but only where it went the way decided for it:
  // a writer leaves blocks past its slot in its buffer whatever was decided.
  const bool measurable =
      published >= EagerStoreChoice::kMeasuredFrom || args.kind == CollectiveKind::all_to_allv;
  bool decides = measurable && stores_.decides(args, published);
  const int timed_writer = decides ? stores_.timed_writer(args) : -1;
  const bool timed_writer_lent = decides && writer_buffer(timed_writer) != 0;
  decides = decides && timed_writer_lent == stores_.decided_read_from_writer(args, published, operation.op);
  std::uint64_t reading_took = 0;
  int unread_writer = -1;  // a writer whose buffer could not be read, and why
  int unread_errno = 0;
  // What the call writes on this rank, by which a copy from a shared segment takes its stores
  // (copy_into_own_result): a broadcast's piece counts its whole call, whose count every piece's
  // record carries.
  const std::size_t call_writes = args.kind == CollectiveKind::broadcast
                                      ? static_cast<std::size_t>(operation.record.count) * size_of(args.output.type)
                                      : args.output.bytes();
  // Copies `bytes` from `at` in `writer`'s payload, in its slot or in its buffer.
  auto copy_from = [&](int writer, std::byte* to, std::size_t at, std::size_t bytes) {
    const bool timed = decides && writer == timed_writer;
    const auto began = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (const std::uint64_t buffer = writer_buffer(writer); buffer == 0) {
      plain_copy(to, payload(writer) + at, bytes);
    } else {
      const std::byte* in_segment = writer_segment(writer, operation.op);
      if (const int error = read_writer_buffer(writer, buffer + at, in_segment ? in_segment + at : nullptr, to, bytes,
                                               {.output_bytes = call_writes, .in_place = args.in_place});
          error != 0) {
        unread_writer = writer;
        unread_errno = error;
      }
    }
    if (timed) reading_took = elapsed_nanoseconds(began);
  };
  auto* output = static_cast<std::byte*>(args.output.data);
  const std::size_t element = size_of(args.output.type);
  std::int64_t read_through = operation.op;  // the last operation this finish() reads
  // Out of place, the all-gather's and the all-to-all's own block streams where the block itself
  // reaches the threshold, not the whole output, whose other blocks the reads store plainly: on
  // the AMD EPYC VM of perftests/HISTORY.md (2026-11-30, three alternated launches each at two
  // ranks, `all_gather_perf` / `alltoall_perf -b 2M -e 64M -f 2`) the all-gather at 4 MiB ran
  // 0.96-1.06x mpi_best where the streamed block gave 0.76-0.96x, the all-to-all 0.94-1.13x
  // against 0.89-1.06x, both level from 8 MiB.
  switch (args.kind) {
    case CollectiveKind::all_gather: {
      // In rank order, its own block at its turn, as the shm all-gather does: every rank then
      // reads the same writer's block at about the same time. Peers first and its own block last,
      // the out-of-place call on allocate_shared buffers at two ranks took 1.27-1.47x as long at
      // 16-64 MiB on the Intel VM of perftests/HISTORY.md (four alternated launches).
      const std::size_t block = args.input.bytes();
      for (int rank = 0; rank < size_; ++rank) {
        if (rank != rank_) {
          copy_from(rank, output + rank * block, 0, block);
        } else if (!args.in_place) {
          copy_host_bytes(output + rank_ * block, args.input.data, block, block);
        }
      }
      break;
    }
    case CollectiveKind::all_to_all: {
      const std::size_t block = args.input.bytes() / static_cast<std::size_t>(size_);
      for (int rank = 0; rank < size_; ++rank) {
        if (rank == rank_) continue;
        if (const std::uint64_t buffer = writer_buffer(rank); args.in_place && buffer != 0) {
          if (const int error = swap_half_with(rank, output + rank * block, buffer + rank_ * block, block);
              error != 0) {
            unread_writer = rank;
            unread_errno = error;
          }
        } else {
          copy_from(rank, output + rank * block, rank_ * block, block);
        }
      }
      if (!args.in_place) {
        copy_host_bytes(output + rank_ * block, static_cast<const std::byte*>(args.input.data) + rank_ * block, block,
                        block);
      }
      break;
    }
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter: {
      // In rank order on every rank, so that all of them get the same bits.
      const std::size_t count = args.output.count;
      const std::size_t at = args.kind == CollectiveKind::reduce_scatter ? rank_ * count * element : 0;
      const bool own_from_input = own_block_unpublished(args);
      auto contribution = [&](int rank) {
        return rank == rank_ && own_from_input ? static_cast<const std::byte*>(args.input.data) + at
                                               : payload(rank) + at;
      };
      reduce_pair(output, contribution(0), contribution(1), count, args.output.type, args.op);
      for (int rank = 2; rank < size_; ++rank) {
        reduce_into(output, contribution(rank), count, args.output.type, args.op);
      }
      if (args.op == ReduceOp::avg) divide_for_average(output, count, args.output.type, size_);
      break;
    }
    case CollectiveKind::broadcast:
      if (args.input.bytes() > args.output.bytes() && writer_buffer(args.root) != 0) {
        // A root that lends a piece of its call from a shared segment lends the rest of the call
        // with it (lends_shared_broadcast()): every reader copies it in one go, through its
        // mapping as the shm broadcast does, and every rank counts the later pieces finished with
        // this one, which the root publishes no more. Copied piece by piece, two ranks'
        // broadcasts of 32-64 MiB ran at 0.81-0.96x the shm broadcast's speed, in one go with
        // every piece still published 0.90-1.02x at 4-64 MiB.
        const auto pieces = static_cast<std::int64_t>((args.input.bytes() + kPayloadBytes - 1) / kPayloadBytes);
        read_through = operation.op + pieces - 1;
        if (args.root != rank_) copy_from(args.root, output, 0, args.input.bytes());
      } else if (args.root != rank_) {
        copy_from(args.root, output, 0, args.output.bytes());
      }
      break;
    case CollectiveKind::all_to_allv: {
      std::array<const std::byte*, kMaxRanks> every{};
      for (int rank = 0; rank < size_; ++rank) every[static_cast<std::size_t>(rank)] = payload(rank);
      const std::span<const std::byte* const> payloads(every.data(), static_cast<std::size_t>(size_));
      ErrorContext context = where_;
      context.operation = args.label.name;
      context.sequence = args.label.sequence;
      auto mismatch = all_to_allv_mismatch(payloads, args, rank_, std::move(context));
      if (!mismatch) forecast_.learn(payloads, args, rank_);
      if (mismatch) {
        failures_.emplace(operation.op, std::move(*mismatch));
      } else if (all_to_allv_published_everywhere(payloads)) {
        // From three ranks, the peers' blocks first, from the next rank on, its own block last:
        // every writer is read by one reader at a time, as in a pairwise exchange's steps, and the
        // writers, who wait for their readers, are freed before this rank copies its own block.
        // In rank order every reader started with rank 0's buffer: three ranks on mpi on the Zen 4
        // guest of perftests/README.md (2026-12-03, `alltoallv_perf -b 1M -e 4M -f 2`, 16
        // alternated pairs of launches at 2 and 4 MiB, 10 at 1 MiB, mpi_best / time) ran 4 MiB at
        // a median of 1.06x against 0.98x (5 of 16 launches below 0.95 before, 2 after), 1 MiB at
        // 1.04x against 1.00x, 2 MiB at 1.01x against 1.06x (4 of 16 below 0.95 either way). At
        // two ranks, where each writer has one reader, rank order stays: there the small calls
        // read from the slots ran 0.95-0.96x at 96 B and 1.01-1.06x at 384 B with the peer's block
        // first, 0.93-1.07x and 1.05-1.20x in rank order (three alternated pairs of launches).
        const int first = size_ > 2 ? rank_ + 1 : 0;
        for (int step = 0; step < size_; ++step) {
          const int rank = (first + step) % size_;
          const std::size_t bytes = args.layout.recv_counts[static_cast<std::size_t>(rank)] * element;
          if (bytes == 0) continue;
          std::byte* to = output + args.layout.recv_offsets[static_cast<std::size_t>(rank)] * element;
          if (rank == rank_) {
            const auto* input = static_cast<const std::byte*>(args.input.data);
            // Blocks read from the writers' inputs may be of any size: past the cache, stream.
            copy_host_bytes(to, input + args.layout.send_offsets[static_cast<std::size_t>(rank)] * element, bytes,
                            args.output.bytes());
          } else {
            copy_from(rank, to, all_to_allv_block_at(payloads, rank, rank_), bytes);
          }
        }
      } else {
        handed_over_.push_back(operation.op);
      }
      decides = decides && finished_cleanly(operation.op);  // a call handed over read no block
      break;
    }
  }
  if (unread_writer >= 0) {
    failures_.emplace(operation.op, unread_buffer_error(args, unread_writer, unread_errno));
    decides = false;
  }
  if (decides) {
    std::uint64_t writing_took = 0;  // a payload left in its buffer wrote nothing
    if (!timed_writer_lent) {
      std::memcpy(&writing_took, header(timed_writer, operation.op) + kWritingTookAt, sizeof writing_took);
    }
    const auto took = std::chrono::nanoseconds(reading_took + writing_took);
    stores_.record(args, published, operation.op, took);
  }
  mark_read(read_through);
  prefetch_next_headers(args, read_through + 1);
}

inline void EagerMailbox::settle(const Operation& operation) {
  // A root that reads nothing is spared finish()'s frame and bookkeeping: on the Zen 4 guest of
  // perftests/README.md (2026-12-03, `broadcast_perf -b 8 -e 8 --repeat 7`, ten alternated pairs
  // of launches, out of place, mpi_best / time), in launches where the reader waits for the
  // root, 8 B broadcasts through finish() ran 0.77-0.96x (0.28-0.34 us), without it 0.84-0.98x
  // (0.27-0.31 us); where the root runs ahead, 1.14-1.24x against 1.25-1.33x.
  const auto& args = operation.args;
  if (args.kind == CollectiveKind::broadcast && args.root == rank_ && args.output.bytes() <= kInlineBytes) {
    mark_read(operation.op);
  } else {
    finish(operation);
  }
}

inline void EagerMailbox::prefetch_next_headers(const CollectiveArgs& args, std::int64_t next) const noexcept {
  for (int rank = 0; rank < size_; ++rank) {
    const bool read = args.kind == CollectiveKind::broadcast ? rank == args.root : rank != rank_;
    if (read && rank != rank_) __builtin_prefetch(header(rank, next), /*rw=*/0, /*locality=*/3);
  }
}

int EagerMailbox::swap_half_with(int peer, std::byte* mine, std::uint64_t theirs, std::size_t bytes) {
  const std::size_t middle = bytes / 2 / kCacheLine * kCacheLine;
  const std::size_t begin = rank_ < peer ? 0 : middle;
  const std::size_t end = rank_ < peer ? middle : bytes;
  const std::int64_t pid = processes_[peer].pid;
  // A thread of this process: its buffer is addressed here. Another process's buffer is reached by
  // kernel copies even where it lies in a shared segment, whose mappings here are read-only.
  auto* direct = pid == processes_[rank_].pid ? reinterpret_cast<std::byte*>(theirs) : nullptr;
  if (swap_bounce_.size() < kSwapChunk + kCopyPageBytes) swap_bounce_.resize(kSwapChunk + kCopyPageBytes);
  // At the peer's block's offset within a page: a kernel copy whose destination lies 1-31 bytes
  // past its source's offset within a page ran 3-6x slower on an AMD EPYC (Zen 3) guest
  // (plain_copy.hpp; perftests/README.md, "Copies a few bytes out of step").
  // The chunks are whole pages apart, so one offset serves them all.
  const auto offset = (theirs + begin - reinterpret_cast<std::uintptr_t>(swap_bounce_.data())) % kCopyPageBytes;
  std::byte* bounce = swap_bounce_.data() + offset;
  for (std::size_t at = begin; at < end; at += kSwapChunk) {
    const std::size_t chunk = std::min(kSwapChunk, end - at);
    if (direct != nullptr) {
      plain_copy(bounce, direct + at, chunk);
      plain_copy(direct + at, mine + at, chunk);
    } else {
      if (const int error = read_from_process(pid, theirs + at, bounce, chunk); error != 0) return error;
      if (const int error = write_to_process(pid, theirs + at, mine + at, chunk); error != 0) return error;
    }
    plain_copy(mine + at, bounce, chunk);
  }
  return 0;
}

int EagerMailbox::read_writer_buffer(int writer, std::uint64_t address, const std::byte* in_segment, void* to,
                                     std::size_t bytes, const OwnResult& result) const noexcept {
  const std::int64_t pid = processes_[writer].pid;
  if (pid == processes_[rank_].pid) {
    plain_copy(to, reinterpret_cast<const void*>(address), bytes);  // a thread of this process
    return 0;
  }
  if (in_segment != nullptr) {
    copy_into_own_result(to, in_segment, bytes, result);
    return 0;
  }
  return read_from_process(pid, address, to, bytes);
}

void EagerMailbox::describe_lent_buffer(std::int64_t op, const void* buffer, std::size_t bytes) const noexcept {
  std::uint64_t in_segment = 0;
  try {
    if (shared_buffers_) {
      if (auto location = shared_buffers_->locate(buffer, bytes)) {
        const auto reference = SegmentReference::of(*location);
        if (!reference.empty()) {
          std::memcpy(slot(rank_, op) + kSegmentReferenceAt, &reference, sizeof reference);
          in_segment = kInSharedSegment;
        }
      }
    }
  } catch (...) {
    in_segment = 0;  // the readers read it by kernel copy
  }
  std::memcpy(header(rank_, op) + kWritingTookAt, &in_segment, sizeof in_segment);
}

std::size_t EagerMailbox::shared_broadcast_lending_threshold(PeerReads peer_reads, bool ranks_share_cores) noexcept {
  // Lent, a 1 KiB broadcast at two ranks took 1.08 us against 0.44 through the slots, the root
  // waiting for its reader, and each call would look the buffer up. Where the ranks share cores
  // the root's wait for its readers, who need its core, costs more: on the AMD EPYC VM on 2026-11-30, 3 and 4
  // ranks on its 2 cores (`broadcast_perf --buffers shared --algo eager,shm`, two alternated
  // launches each with and without lending, mpi_best / time, out / in place), lent broadcasts
  // took 13.4-28.4 us at 32 KiB against 3.8-9.7 through the slots and 14.2-36.1 us at 128 KiB
  // against 7.6-24.9, but ran 1.44-1.64 / 1.56-2.06x at 512 KiB against 1.14-1.74 / 1.12-1.74x and
  // 1.26-1.75 / 1.42-2.10x at 2-32 MiB against 0.69-1.26 / 0.58-1.37x, level with the shm
  // broadcast (1.21-1.65 / 1.41-1.96x).
  if (peer_reads == PeerReads::never) return std::numeric_limits<std::size_t>::max();
  if (peer_reads == PeerReads::automatic && ranks_share_cores) return kLendSharedBroadcastsWhereCoresAreSharedFrom;
  return kLendSharedBroadcastsFrom;
}

bool EagerMailbox::lends_shared_broadcast(const CollectiveArgs& args) const noexcept {
  // A piece's input is the rest of its call (start_in_pieces()), which is lent with it: its first
  // piece's is the whole call.
  if (args.kind != CollectiveKind::broadcast || args.root != rank_ || !shared_buffers_ ||
      args.input.bytes() < lend_shared_broadcasts_from_) {
    return false;
  }
  try {
    return shared_buffers_->locate(args.input.data, args.input.bytes()).has_value();
  } catch (...) {
    return false;  // through the slots
  }
}

const std::byte* EagerMailbox::writer_segment(int writer, std::int64_t op) const noexcept {
  if (!shared_buffers_ || processes_[writer].pid == processes_[rank_].pid) return nullptr;
  std::uint64_t in_segment = 0;
  std::memcpy(&in_segment, header(writer, op) + kWritingTookAt, sizeof in_segment);
  if (in_segment != kInSharedSegment) return nullptr;
  SegmentReference reference;
  std::memcpy(static_cast<void*>(&reference), slot(writer, op) + kSegmentReferenceAt, sizeof reference);
  const auto location = reference.location();
  try {
    return shared_buffers_->map_peer(location.handle) + location.offset;
  } catch (...) {
    return nullptr;  // a kernel copy reads it still
  }
}

Error EagerMailbox::unread_buffer_error(const CollectiveArgs& args, int writer, int failure) const {
  ErrorContext context = where_;
  context.operation = args.label.name;
  context.sequence = args.label.sequence;
  context.peer = writer;
  if (failure == ESRCH) {
    return processes_.failure(std::array{writer}, std::move(context),
                              "its eager payload cannot be read; the communicator cannot be used again");
  }
  const bool swapped = args.kind == CollectiveKind::all_to_all && args.in_place;
  return Error(ErrorCode::backend_failure,
               fmt::format("could not {} rank {}'s buffer ({}: {}); MESHCOMM_EAGER_PEER_READS=never passes every "
                           "payload through the shared slots",
                           swapped ? "swap blocks with" : "read the eager payload from", writer,
                           swapped ? "process_vm_readv or process_vm_writev" : "process_vm_readv",
                           std::strerror(failure)),
               std::move(context));
}

void EagerMailbox::Pending::keep_layout() { args.layout = copy_layout(args.layout, layout); }

void EagerMailbox::mark_read(std::int64_t op) noexcept {
  finished_ = op + 1;
  store_release(bases_[rank_], static_cast<std::uint64_t>(finished_));
  // A wait on a later operation (the last piece of a broadcast) then polls again at once instead
  // of backing off into naps while the pieces move: without it the eager broadcast of 64 MiB on
  // user buffers at two ranks took 1.4-1.5x as long out of place.
  note_progress();
}

bool EagerMailbox::done(std::int64_t op) noexcept {
  if (finished_ <= op) return false;
  while (!lent_.empty() && lent_.front().op <= op) {
    if (!read_everywhere(lent_.front().op)) return false;
    lent_.pop_front();
    note_progress();
  }
  return true;
}

void EagerMailbox::progress() {
  // An operation below finished_ that is still queued is a broadcast's piece that this rank copied
  // ahead with an earlier one (finish()): finished already, it is neither published nor read.
  // Whatever has arrived is finished before the next operation is published, one at a time, as a
  // call started with every peer ahead of it runs (start_locked()): a rank that publishes a
  // piece and at once reduces it reads its own payload while it is still in its cache, and frees
  // the slot for its peers sooner. Publishing every free slot first and finishing after, a call
  // reserved behind the shm path's exchange (start_if()) ran two ranks' all-reduces of 2-8 MiB
  // in place 5-8% slower than the same call started on its own (three alternated launches on the
  // Intel Xeon guest of perftests/README.md, 2026-12-01), and the shm path's default 0.82-0.93x
  // mpi_best where it now runs 0.94-1.01x.
  do {
    do {
      while (!pending_.empty()) {
        const auto& front = pending_.front();
        if (front.op >= finished_) {
          if (!front.published || !all_arrived(front.operation())) break;
          settle(front.operation());
        }
        pending_.pop_front();
      }
    } while (publish_next());
  } while (decide_reserved_call());
}

bool EagerMailbox::publish_next() {
  for (auto& pending : pending_) {
    if (pending.published || pending.op < finished_) continue;
    if (pending.runs_if) return false;  // a reserved call publishes once decided
    const std::size_t bytes = published_bytes(pending.args);
    if (!slot_free(pending.op, place(pending.args, bytes))) return false;
    if (publish(pending.operation(), bytes)) lent_.push_back({pending.op, pending.buffers});
    pending.published = true;
    note_progress();
    return true;
  }
  return false;
}

bool EagerMailbox::decide_reserved_call() {
  if (pending_.empty() || !pending_.front().runs_if || pending_.front().op != finished_) return false;
  Pending call = std::move(pending_.front());
  pending_.pop_front();
  if (!call.runs_if()) {
    mark_read(call.last_op);
    return true;
  }
  call.runs_if = nullptr;
  if (!in_pieces(call.args)) {
    pending_.push_front(std::move(call));
    return true;
  }
  // Its pieces go in front, last first: nothing queued behind them moves.
  for (std::int64_t op = call.last_op; op >= call.op; --op) {
    const std::size_t at = static_cast<std::size_t>(op - call.op) * piece_elements(call.args);
    pending_.push_front(
        Pending{.op = op, .args = piece_of(call.args, at), .record = call.record, .buffers = call.buffers});
  }
  return true;
}

std::int64_t EagerMailbox::start(const CollectiveArgs& args, const CallRecord& record,
                                 std::shared_ptr<const void> buffers) {
  std::lock_guard hold(lock_);
  const std::int64_t op = issued_++;
  return start_locked(op, args, record, std::move(buffers)) ? -1 : op;
}

CollectiveArgs EagerMailbox::piece_of(const CollectiveArgs& args, std::size_t at) noexcept {
  CollectiveArgs piece = args;
  piece.output.data = static_cast<std::byte*>(args.output.data) + at * size_of(args.output.type);
  piece.output.count = std::min(piece_elements(args), args.output.count - at);
  if (args.kind == CollectiveKind::all_reduce) {
    // The same elements of the input (the output itself in place).
    piece.input.data = static_cast<const std::byte*>(args.input.data) + at * size_of(args.input.type);
    piece.input.count = piece.output.count;
  } else {
    // A broadcast's input is the rest of the call, from this piece on: a reader of a root's buffer
    // that lies in a shared segment copies it all at once (finish()).
    piece.input = piece.output;
    piece.input.count = args.output.count - at;
  }
  return piece;
}

std::optional<EagerMailbox::Operations> EagerMailbox::start_in_pieces(const CollectiveArgs& args,
                                                                      const CallRecord& record,
                                                                      const std::shared_ptr<const void>& buffers) {
  std::lock_guard hold(lock_);
  std::optional<Operations> unfinished;
  for (std::size_t at = 0; at < args.output.count; at += piece_elements(args)) {
    const std::int64_t op = issued_++;
    if (start_locked(op, piece_of(args, at), record, buffers)) continue;
    if (!unfinished) unfinished = Operations{.first = op, .last = op};
    unfinished->last = op;
  }
  return unfinished;
}

EagerMailbox::Operations EagerMailbox::start_if(const CollectiveArgs& args, const CallRecord& record,
                                                std::function<bool()> runs) {
  const std::size_t pieces =
      in_pieces(args) ? (args.output.count + piece_elements(args) - 1) / piece_elements(args) : 1;
  std::lock_guard hold(lock_);
  const Operations reserved{.first = issued_, .last = issued_ + static_cast<std::int64_t>(pieces) - 1};
  issued_ = reserved.last + 1;
  auto& pending = pending_.emplace_back(Pending{
      .op = reserved.first, .args = args, .record = record, .runs_if = std::move(runs), .last_op = reserved.last});
  if (args.kind == CollectiveKind::all_to_allv) pending.keep_layout();
  progress();
  return reserved;
}

bool EagerMailbox::start_locked(std::int64_t op, const CollectiveArgs& args, const CallRecord& record,
                                std::shared_ptr<const void> buffers) {
  if (op < finished_) return true;  // a broadcast's piece copied ahead with an earlier one (finish())
  bool published = false;
  const bool nothing_waits = pending_.empty();
  const std::size_t bytes = nothing_waits ? published_bytes(args) : 0;  // queued, publish_next() works it out
  if (nothing_waits && slot_free(op, place(args, bytes))) {
    // Nothing earlier is waiting: publish at once and, if the peers are all here, finish without
    // queueing or copying the call (the common case of a small call).
    const Operation now{op, args, record};
    if (publish(now, bytes)) lent_.push_back({op, buffers});
    if (all_arrived(now)) {
      settle(now);
      return finished_cleanly(op) && done(op);
    }
    published = true;
  }
  auto& pending =
      pending_.emplace_back(Pending{.op = op, .args = args, .record = record, .buffers = std::move(buffers),
                                    .published = published});
  if (args.kind == CollectiveKind::all_to_allv) pending.keep_layout();
  progress();
  return finished_cleanly(op) && done(op);
}

bool EagerMailbox::finished_cleanly(std::int64_t op) const noexcept {
  return !failures_.contains(op) && std::find(handed_over_.begin(), handed_over_.end(), op) == handed_over_.end();
}

bool EagerMailbox::hands_over_at_once(std::int64_t op, const CollectiveArgs& args) {
  if (stores_.reads_from_writer(args, 0)) return false;
  if (!all_to_allv_fits(args, rank_, all_to_allv_capacity_)) return true;
  std::lock_guard hold(lock_);
  // Not yet published (its slot was still in use), the operation's way is not decided yet.
  return arrived(rank_, op) && all_to_allv_handed_over_early(all_to_allv_payload(rank_, op));
}

const std::byte* EagerMailbox::all_to_allv_payload(int rank, std::int64_t op) const noexcept {
  const std::byte* inline_bytes = header(rank, op) + kInlineAt;
  return all_to_allv_table_inline(inline_bytes) ? inline_bytes : slot(rank, op) + kHeadersBytes;
}

bool EagerMailbox::take_handed_over(std::int64_t op) {
  std::lock_guard hold(lock_);
  const auto found = std::find(handed_over_.begin(), handed_over_.end(), op);
  if (found == handed_over_.end()) return false;
  handed_over_.erase(found);
  return true;
}

bool EagerMailbox::finished(std::int64_t op) {
  std::lock_guard hold(lock_);
  if (finished_ <= op) progress();
  if (auto failure = failures_.find(op); failure != failures_.end()) {
    Error error = failure->second;
    failures_.erase(failure);
    throw error;
  }
  return done(op);
}

std::vector<int> EagerMailbox::waiting_for(std::int64_t op) {
  std::lock_guard hold(lock_);
  std::vector<int> ranks;
  // Operations this rank has finished but whose payloads its peers still read from its buffer
  // come before those it has not finished.
  for (const auto& lent : lent_) {
    if (lent.op > op) break;
    for (int rank = 0; rank < size_; ++rank) {
      if (rank != rank_ && static_cast<std::int64_t>(load_acquire(bases_[rank])) <= lent.op) ranks.push_back(rank);
    }
    if (!ranks.empty()) return ranks;
  }
  for (const auto& pending : pending_) {
    if (pending.op > op) break;
    if (pending.op < finished_) continue;  // copied ahead (progress())
    for (int rank = 0; rank < size_; ++rank) {
      if (rank == rank_) continue;
      const bool behind = pending.published
                              ? !arrived(rank, pending.op)
                              : static_cast<std::int64_t>(load_acquire(bases_[rank])) <=
                                    last_user(pending.op, place(pending.args, published_bytes(pending.args)));
      const bool needed = pending.args.kind != CollectiveKind::broadcast || !pending.published ||
                          rank == pending.args.root;
      if (behind && needed) ranks.push_back(rank);
    }
    if (!ranks.empty()) break;
  }
  return ranks;
}

std::optional<Error> EagerMailbox::failure_of_ended_peers(std::int64_t op, ErrorContext context,
                                                          std::string_view operation) {
  const auto waited = waiting_for(op);
  const auto ended = processes_.ended(waited);
  if (ended.empty()) return std::nullopt;
  return processes_.failure(ended, std::move(context),
                            fmt::format("this rank's eager {} waiting for it cannot finish; the communicator cannot "
                                        "be used again",
                                        operation));
}

}  // namespace meshcomm::detail
