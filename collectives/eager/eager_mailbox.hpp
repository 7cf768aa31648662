#pragma once

// The eager path for small collectives between processes (or threads) on one host: each rank
// publishes its whole input (an all-to-all, and a reduce-scatter out of place, all but its own
// block, which no peer reads) into a slot of shared memory that every peer maps, and every rank
// computes its own output from the peers' slots. No messages, no engine round trips: a call
// whose peers have already arrived completes inside the call.
//
// Each rank owns one segment: a `finished` counter, the table of its decisions about how
// payloads are stored (EagerStoreChoice) and kSlots slots, each kHeadersPerSlot headers and
// kPayloadBytes of payload. A header holds a sequence word, the call's record (CallRecord: a rank
// whose call differs from a peer's fails naming both) and, in the same line, a payload that fits
// there (a small call's). Operation n (counted per communicator, in call order, alike on every
// rank) uses slot n % kSlots, its header (n / kSlots) % kHeadersPerSlot and, for a payload larger
// than the header holds, that header's share of the slot's payload bytes (kPayloadShareBytes) or,
// larger still, the whole payload bytes. A rank writes its payload, then stores n + 1 into the
// header's sequence word (release); a reader that loads n + 1 (acquire) may read the payload.
// Before operation n, the owner waits until it and every peer (their `finished` counters) have
// read the operation that last used what n writes: operation n - kHeaders where its payload
// fits its header, the same or the slot's last operation that used the whole payload bytes where
// it fits the share, n - kSlots where it takes the whole payload bytes. A rank keeps the last
// value it loaded of each peer's counter and loads it again only when that value no longer frees
// the slot, so that a call usually reads no line a peer has just written but the header it
// needs; small calls, whose headers and shares are reused kHeaders operations apart, load a
// peer's counter once every hundred or so. Operations publish and finish in call order; any test
// or wait on one drives the older ones first, so no rank waits on a peer that waits on it.
//
// A broadcast or an all-reduce larger than a slot passes through the slots in pieces of a slot's
// payload, each an operation of its own (start_in_pieces): a writer stores one piece while its
// readers copy (or reduce) the one before. An all-reduce's piece is an all-reduce of its own,
// which every rank reduces whole, in rank order, from every slot: no rank waits on a peer's
// partial sum, at the cost of size-fold reductions (selection.cpp says up to what size it pays).
// A shm all-reduce reserves such a call as its takeover, behind its exchange of descriptors, which
// then decides whether the call runs or its operations are skipped alike on every rank (start_if).
//
// A broadcast's root leaves out of its stores the leading blocks of a payload its slot already
// holds, so that a broadcast of data at rest, up to the slots' kSlots payloads, moves no line
// between the cores but the slots' headers (a larger one reuses its slots within the call). A root
// whose buffer lies in a shared segment (Communicator::allocate_shared) leaves its payload there
// instead, and its readers copy the whole call's at the first piece, through their mappings, and
// count every piece of the call finished with it.
//
// A payload of an exchange may instead stay in its writer's buffer, its slot saying where, for
// the readers to copy in one copy (PayloadWay::read_from_writer, eager_store_choice.hpp). Its
// writer's operation then ends only once every peer has finished it, that is, read the buffer;
// the peers read it from any wait of theirs (a progress hook), as MPI's progress rule asks. An
// all-to-all in place so lends its whole buffer, where a rank's block for a peer is also where
// the peer's block for it lands: the two ranks of each pair swap those two blocks between their
// buffers, the lower rank the first half of each, the higher one the rest, each with kernel
// copies from the peer's buffer and into it through a bounce buffer (swap_half_with). No rank
// touches a byte another one does, and none returns before its peers have swapped their halves
// of its blocks. Open MPI's in-place call copies each block aside, then sends the copy: two
// copies of every block, where the swaps make one and a half, half of it between the bounce
// buffer and the caller's, in cache.

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <map>
#include <optional>

#include "call_record.hpp"
#include "collective_args.hpp"
#include "eager_all_to_allv.hpp"
#include "eager_store_choice.hpp"
#include "meshcomm/error.hpp"
#include "plain_copy.hpp"
#include "process_liveness.hpp"
#include "progress_hooks.hpp"
#include "spin_lock.hpp"

namespace meshcomm::detail {

class CommunicatorImpl;
class SharedMemoryRegistry;
class SharedSegment;
struct OwnResult;

/// How the payload a broadcast's root last stored into one of its slots starts, kept in the
/// root's own memory: new data is told from data the slot already holds without loading the
/// slot's lines, which its readers have taken (EagerMailbox::publish).
struct HeldPayloadStart {
  std::array<std::byte, 64> bytes{};
  std::size_t count = 0;  ///< bytes known; 0 where another operation's payload went into the slot since
};

/// One communicator's eager slots and its operations not yet finished.
class EagerMailbox {
 public:
  /// The most bytes one rank publishes per operation.
  static constexpr std::size_t kPayloadBytes = 64 * 1024;
  /// Operations in flight before a rank waits for its peers to catch up. Sixteen hold a 1 MiB
  /// broadcast's pieces, so that a root sending data at rest up to that size stores nothing: at
  /// two ranks on an Intel Xeon guest (2026-12-02, two alternated pairs of launches against four
  /// slots) in place at rest 1.14-1.17x `mpi_best` at 512 KiB and 1.41-1.50x at 1 MiB where four
  /// ran 0.51-0.75x, level with new data in every call, and at four ranks the 8-128 B broadcasts
  /// in half the time (perftests/HISTORY.md, "Sixteen eager slots").
  static constexpr int kSlots = 16;
  /// Headers a slot holds, used by its operations in turn: an operation whose payload fits its
  /// header reuses the header only kHeaders operations later, so that a rank whose peer keeps up
  /// loads the peer's `finished` counter, a line the peer writes at every call, once every
  /// hundred or so such calls instead of every fifteen, and a rank that runs ahead of a slow peer
  /// goes on that much further. At two ranks on the Zen 4 guest of perftests/README.md
  /// (2026-12-03, `broadcast_perf -b 8 -e 8 -n 20000 -w 500 --repeat 7`, 45 rounds of alternated
  /// launches), where the ranks' cores pass a line in 300-360 ns the 8 B broadcast ran at a median
  /// 0.98x `mpi_best` out of place and 0.95x in place against 0.92x and 0.89x with one header a
  /// slot (64 whole slots instead of 16: 0.99x and 0.95x, for four times the memory); where they
  /// pass it in about 70 ns, 1.31x and 1.29x against 1.30x and 1.25x. Where the ranks outnumber
  /// the cores, a root no longer stops every sixteen small calls for readers that wait for the
  /// core: at three and four ranks on the two cores the 8-32 B broadcast ran 1.49-2.18x against
  /// 0.64-1.21x.
  static constexpr int kHeadersPerSlot = 8;
  /// Operations apart at which a header is reused.
  static constexpr int kHeaders = kSlots * kHeadersPerSlot;
  /// A slot's payload bytes fall into kHeadersPerSlot shares of this size, one a header. A payload
  /// too large for its header's inline bytes but not for a share lies in its header's share, and
  /// so is reused, as a header is, kHeaders operations later, unless an operation that used the
  /// slot's whole payload bytes came between. (Not an all_to_allv's, whose writers each choose
  /// where theirs lie, nor one whose way of passing is measured: EagerStoreChoice decides from
  /// operation n for n + kSlots on, which assumes that operation n + kSlots waits for n.) A
  /// broadcast's root so runs as far ahead of readers that wait for a core as it does with
  /// payloads in its headers: at three ranks on the two cores of the Zen 4 guest of
  /// perftests/README.md (2026-12-03, `broadcast_perf -b 64 -e 8K -f 2 -n 5000 -w 200
  /// --repeat 5`, two alternated pairs of launches) 64 B ran 1.47-1.63x `mpi_best` against
  /// 0.78-0.83x with the whole payload bytes, 512 B-2 KiB 11.8-16.8x against 6.5-10.5x, and at
  /// four ranks 64 B 1.60-1.96x against 0.79-1.03x. At two ranks the small calls ran level.
  static constexpr std::size_t kPayloadShareBytes = kPayloadBytes / kHeadersPerSlot;
  /// The bytes an in-place all-to-all's swap moves through its bounce buffer at a time
  /// (swap_half_with): at two ranks on the AMD EPYC guest of perftests/README.md, a program of
  /// the same swaps ran them level at 256 KiB to 1 MiB a time, and 1.5x as long at 64 KiB.
  static constexpr std::size_t kSwapChunk = 256 * 1024;
  static_assert(kSwapChunk % kCopyPageBytes == 0, "a swap's chunks start at one offset within a page");
  /// Beyond this many ranks a latency-optimal algorithm reads fewer slots than this path.
  static constexpr int kMaxRanks = 16;
  /// Where the ranks have cores of their own, a root lends broadcasts of shared buffers from this
  /// size (shared_broadcast_lending_threshold() says what it cost below).
  static constexpr std::size_t kLendSharedBroadcastsFrom = 32 * 1024;
  /// Where the ranks share cores, a root lends broadcasts of shared buffers from this size (below
  /// it, its wait for readers who need its core costs more than the slots' copies).
  static constexpr std::size_t kLendSharedBroadcastsWhereCoresAreSharedFrom = 512 * 1024;
  /// From what size a root lends a broadcast's buffer that lies in a shared segment: where every
  /// rank may read every peer's memory (PeerReads), from kLendSharedBroadcastsFrom, or
  /// from kLendSharedBroadcastsWhereCoresAreSharedFrom where the ranks share cores, since a root
  /// that lends cannot finish before its readers have read; never where `peer_reads` is never.
  static std::size_t shared_broadcast_lending_threshold(PeerReads peer_reads, bool ranks_share_cores) noexcept;

  /// Collective over `comm` (every rank calls it at the same point): each rank maps every peer's
  /// segment. Null, alike on every rank, unless there are 2 to kMaxRanks ranks, all on this host,
  /// on a backend that moves host memory, and every rank could make its segment.
  static std::shared_ptr<EagerMailbox> create(CommunicatorImpl& comm, OperationLabel label);

  /// `segments` made `own` and mapped the peers' `bases`; `processes` are the ranks' processes;
  /// `where` names the backend and rank in errors, each of which names its operation and peer
  /// itself; `ranks_share_cores`: the ranks outnumber the cores they may run on; `peer_reads`:
  /// never unless every rank may read every peer's memory; `shared_buffers`: the communicator's
  /// registry of Communicator::allocate_shared segments, through which payloads left in such
  /// buffers are read (null: none are).
  EagerMailbox(std::shared_ptr<SharedMemoryRegistry> segments, std::shared_ptr<SharedSegment> own,
               std::vector<std::byte*> bases, RankProcesses processes, int rank, ErrorContext where,
               bool ranks_share_cores, PeerReads peer_reads = PeerReads::never,
               std::shared_ptr<SharedMemoryRegistry> shared_buffers = nullptr);
  EagerMailbox(const EagerMailbox&) = delete;
  EagerMailbox& operator=(const EagerMailbox&) = delete;
  ~EagerMailbox();

  /// How many bytes this rank's `args` publishes (into its slot, or in its buffer, from which its
  /// peers read it).
  [[nodiscard]] std::size_t published_bytes(const CollectiveArgs& args) const noexcept;
  /// Whether the path takes `args`, alike on every rank: where what each rank publishes fits its
  /// slot (kPayloadBytes), a broadcast or an all-reduce at any size (in pieces: start_in_pieces),
  /// or, at any size, an all-gather or all-to-all whose payloads all stay in their writers' buffers.
  [[nodiscard]] bool takes(const CollectiveArgs& args) const noexcept;
  /// Whether `args` is a broadcast or an all-reduce larger than a slot (start_in_pieces()).
  [[nodiscard]] static bool in_pieces(const CollectiveArgs& args) noexcept {
    return (args.kind == CollectiveKind::broadcast || args.kind == CollectiveKind::all_reduce) &&
           args.output.bytes() > kPayloadBytes;
  }
  /// Whether this rank starts the takeover of all_to_allv operation `op` (`args`) at once: its
  /// blocks neither stay in its input nor fit its slot, or it published the operation saying that
  /// it hands it over all the same (eager_all_to_allv.hpp). Otherwise the call is handed over once
  /// some peer's table says so, if one does.
  [[nodiscard]] bool hands_over_at_once(std::int64_t op, const CollectiveArgs& args);

  /// Starts `args` as the next operation; returns its number, or -1 when it finished inside the
  /// call (its peers had all arrived and agreed, and it was not handed over). An all_to_allv's
  /// layout is copied where the operation outlasts the call. The ranks compare `record` (by default
  /// `args`' own) to tell whether they agree; `buffers`, where given, owns the memory `args`
  /// points to and is kept until the operation finishes, even if its Work is dropped.
  std::int64_t start(const CollectiveArgs& args, const CallRecord& record, std::shared_ptr<const void> buffers);
  std::int64_t start(const CollectiveArgs& args) { return start(args, CallRecord::of(args), nullptr); }
  /// The numbers of the first and the last operation of a call started in pieces.
  struct Operations {
    std::int64_t first;
    std::int64_t last;
  };
  /// Starts broadcast or all-reduce `args` (in_pieces()) as consecutive operations of kPayloadBytes
  /// each, the last one the rest, every one carrying the whole call's `record`, so that a rank that
  /// disagrees with a peer about the call fails at its first piece. Returns the first and last
  /// operation not finished inside the call; nothing where every piece did.
  std::optional<Operations> start_in_pieces(const CollectiveArgs& args, const CallRecord& record,
                                            const std::shared_ptr<const void>& buffers);
  /// Reserves `args`, a call the path takes, as the next operations (in pieces where in_pieces()),
  /// for a call that an earlier operation decides: none is published until every operation before
  /// them has finished here; then `runs()`, asked once, says (alike on every rank, from what those
  /// operations left) whether they run as start()'s or start_in_pieces()'s would, or are skipped:
  /// counted finished at once, publishing and reading nothing. A shm collective reserves its
  /// takeover so, decided by its exchange of descriptors (shm_single_copy.cpp).
  Operations start_if(const CollectiveArgs& args, const CallRecord& record, std::function<bool()> runs);
  /// Whether all_to_allv operation `op`, finished, left the call to another algorithm because
  /// some rank's blocks did not fit its slot (alike on every rank: eager_all_to_allv.hpp); asks
  /// once.
  bool take_handed_over(std::int64_t op);
  /// Drives the operations not yet finished, oldest first; true once operation `op` has finished
  /// and every peer has read what it left in this rank's buffer. Throws the Error of an operation
  /// whose ranks disagree about the call or whose payload could not be read.
  bool finished(std::int64_t op);
  /// The ranks that operation `op` still waits for: those that have not yet read what this rank
  /// left in its buffer for it or an older operation, the peers that have not published it, or
  /// (if this rank has not published it yet) those that have not read an older operation in its
  /// slot.
  [[nodiscard]] std::vector<int> waiting_for(std::int64_t op);
  /// The peer_failure of operation `op` where a rank it waits for has ended (its process is
  /// gone, so it never arrives), naming that rank and `operation` ("all_gather", "barrier");
  /// empty while every rank it waits for still runs. Reads /proc: for a wait to call now and then.
  [[nodiscard]] std::optional<Error> failure_of_ended_peers(std::int64_t op, ErrorContext context,
                                                            std::string_view operation);

 private:
  /// One operation as publishing and finishing read it: the caller's call and record while it
  /// finishes inside the call (which then copies neither), else a queued operation's copies.
  struct Operation {
    std::int64_t op;
    const CollectiveArgs& args;
    const CallRecord& record;
  };
  /// An operation not finished inside its call.
  struct Pending {
    std::int64_t op;
    CollectiveArgs args;
    CallRecord record;
    std::shared_ptr<const void> buffers;
    bool published = false;
    LayoutStorage layout;  ///< an all_to_allv's counts and offsets, args.layout's
    /// A call reserved by start_if() and not yet decided, one entry for all its operations (from
    /// `op` to `last_op`): whether it runs. Empty otherwise.
    std::function<bool()> runs_if;
    std::int64_t last_op = -1;
    [[nodiscard]] Operation operation() const noexcept { return {op, args, record}; }
    /// Copies args.layout into `layout` and points args.layout there: the caller's arrays need
    /// not outlive the call.
    void keep_layout();
  };
  /// An operation finished here whose payload this rank left in its buffer, until every peer has
  /// finished it too; `buffers` as Pending's.
  struct Lent {
    std::int64_t op;
    std::shared_ptr<const void> buffers;
  };
  /// Whether a rank leaves its own block of `args`'s input out of its slot: an all-to-all's and
  /// an out-of-place reduce-scatter's, which no peer reads; the rank takes it from its input.
  [[nodiscard]] static bool own_block_unpublished(const CollectiveArgs& args) noexcept;
  /// Where in its writer's slot an operation's payload lies, alike on every rank.
  enum class Place : std::uint8_t {
    header,  ///< in its header's inline bytes
    share,   ///< in its header's share of the slot's payload bytes (kPayloadShareBytes)
    whole,   ///< in the slot's payload bytes, from their start
  };
  /// Where a payload of `bytes` of `args` lies.
  [[nodiscard, gnu::always_inline]] inline Place place(const CollectiveArgs& args, std::size_t bytes) const noexcept;
  /// The slot of rank `rank` that operation `op` uses: its headers, then its payload bytes.
  [[nodiscard]] std::byte* slot(int rank, std::int64_t op) const noexcept;
  /// The header of rank `rank`'s operation `op`, in its slot.
  [[nodiscard]] std::byte* header(int rank, std::int64_t op) const noexcept;
  /// Where rank `rank`'s payload for operation `op`, at `place`, lies. Always inlined, as are
  /// place(), last_user() and slot_free(): a first build that called it cost a 64 B all-reduce
  /// at two ranks about 180 instructions more a call (callgrind) and a fifth of its speed.
  [[nodiscard, gnu::always_inline]] inline std::byte* payload(int rank, std::int64_t op, Place place) const noexcept;
  /// Which of held_starts_ says how a broadcast root's payload of operation `op`, at `place`, starts.
  [[nodiscard]] static std::size_t held_start_index(std::int64_t op, Place place) noexcept;
  /// Where rank `rank`'s all_to_allv payload of operation `op`, published, starts: its header's
  /// inline bytes for a compact or a short table, its slot's payload bytes otherwise.
  [[nodiscard]] const std::byte* all_to_allv_payload(int rank, std::int64_t op) const noexcept;
  /// The operation that last used what operation `op`, whose payload lies at `place`, writes
  /// here: its header alone (kHeaders before); its header's share, or the slot's whole payload
  /// bytes, whichever was used last; the slot's whole payload bytes (kSlots before, or an
  /// operation that used the slot later). Negative where none did. Operations finish in order,
  /// so a peer that has read it has read every older one.
  [[nodiscard, gnu::always_inline]] inline std::int64_t last_user(std::int64_t op, Place place) const noexcept;
  /// Whether operation `op`, whose payload lies at `place`, may be published: this rank and every
  /// peer have read last_user().
  [[nodiscard, gnu::always_inline]] inline bool slot_free(std::int64_t op, Place place) const noexcept;
  /// Whether every peer has finished operation `op` (read its slots and this rank's buffer);
  /// loads the counters that do not yet say so.
  [[nodiscard]] bool read_everywhere(std::int64_t op) const noexcept;
  [[nodiscard]] bool arrived(int rank, std::int64_t op) const noexcept;
  [[nodiscard]] bool all_arrived(const Operation& operation) const noexcept;
  /// Publishes `operation`, of published_bytes() `bytes`; true where it left the payload in this
  /// rank's buffer (Lent).
  bool publish(const Operation& operation, std::size_t bytes) noexcept;
  /// Computes this rank's output, or the disagreement's error; marks the operation read.
  void finish(const Operation& operation);
  /// finish(), but for a broadcast root whose payload lies in its slot's inline bytes, which
  /// reads, compares and times nothing: that operation is only marked read.
  [[gnu::always_inline]] inline void settle(const Operation& operation);
  /// Forgets what held_starts_ kept of the payload bytes that `operation`, at `place`, wrote over
  /// with other bytes than a broadcast root's own payload, which store_unless_held() keeps.
  void forget_held_starts(const Operation& operation, Place place) noexcept;
  /// Empty if every rank whose slot `operation` reads made the same call; else the error.
  [[nodiscard]] std::optional<Error> disagreement(const Operation& operation) const;
  /// Whether finished operation `op` neither failed nor was handed over; under `lock_`.
  [[nodiscard]] bool finished_cleanly(std::int64_t op) const noexcept;
  /// Marks operation `op` read here, in the shared counter too.
  void mark_read(std::int64_t op) noexcept;
  /// Starts loading the header line of operation `next` in the slots of the peers that `args`
  /// read (a broadcast's root, else every peer), which the next call likely reads. A peer that has
  /// published it already then costs the next call no wait for the line; one that has not holds
  /// the line as this rank last read it, which the prefetch leaves as it was. On the AMD EPYC
  /// guest of perftests/HISTORY.md ("The 8 B calls on the AMD EPYC guest, 2026-12-03 at
  /// 08:58"), in its slower state, back-to-back 8 B broadcasts at two ranks took 0.33-0.35 us a
  /// call without it, 0.24-0.26 with it (Open MPI's MPI_Bcast 0.19-0.21). Always inlined: as a
  /// call of its own, GCC found it free of effects and left the call out.
  [[gnu::always_inline]] inline void prefetch_next_headers(const CollectiveArgs& args,
                                                           std::int64_t next) const noexcept;
  /// Swaps this rank's half of the two blocks that it and `peer` exchange in place: its block for
  /// the peer, `bytes` at `mine`, and the peer's block for it, at `theirs` in the peer's buffer.
  /// The lower rank of the pair swaps the first half, the higher one the rest, each through a
  /// bounce buffer, kSwapChunk at a time: a kernel copy from the peer's buffer, one into it, and a
  /// copy from the bounce buffer. 0, or the errno of the kernel copy that failed.
  int swap_half_with(int peer, std::byte* mine, std::uint64_t theirs, std::size_t bytes);
  /// Copies `bytes` at `address` in `writer`'s buffer to `to`; 0 or the errno. `in_segment`:
  /// where the buffer lies in a shared segment, its address mapped here, which is read instead,
  /// with the stores copy_into_own_result() takes for `result` (the output this copy is part of).
  int read_writer_buffer(int writer, std::uint64_t address, const std::byte* in_segment, void* to, std::size_t bytes,
                         const OwnResult& result) const noexcept;
  /// Where `writer`'s payload of operation `op`, left in its buffer, lies in a shared segment
  /// (Communicator::allocate_shared): the buffer's start, mapped here; null where it does not, or
  /// where the writer is a thread of this process, or where this process cannot map the segment.
  [[nodiscard]] const std::byte* writer_segment(int writer, std::int64_t op) const noexcept;
  /// Says in this rank's header and slot of operation `op` where its payload, left in `buffer`,
  /// lies in a shared segment, if it does.
  void describe_lent_buffer(std::int64_t op, const void* buffer, std::size_t bytes) const noexcept;
  /// Whether this rank is the root of broadcast `args` and leaves its payload (of
  /// lend_shared_broadcasts_from_ or more) in its buffer, which lies in a shared segment
  /// (Communicator::allocate_shared), for the readers to copy through their mappings of it, as
  /// the shm broadcast does (or by kernel copy where a reader cannot map it); a piece's
  /// (start_in_pieces()) with the rest of its call.
  [[nodiscard]] bool lends_shared_broadcast(const CollectiveArgs& args) const noexcept;
  /// The error of `args`, whose payload from `writer` could not be read from its buffer (`failure`:
  /// the errno): peer_failure where its process has ended.
  [[nodiscard]] Error unread_buffer_error(const CollectiveArgs& args, int writer, int failure) const;
  /// Whether operation `op` has finished here and every operation up to it that this rank lent
  /// has been read by every peer; forgets the lent operations that have been. Under `lock_`.
  bool done(std::int64_t op) noexcept;
  /// Publishes and finishes what it can, in order; under `lock_`.
  void progress();
  /// Decides the call reserved by start_if() at the front of the queue once every operation before
  /// it has finished here: replaces it by its operations where it runs, else counts them finished.
  /// True where it decided one. Under `lock_`.
  bool decide_reserved_call();
  /// Publishes the first queued operation not yet published, if its slot is free and no
  /// undecided call comes before it. True where it published one. Under `lock_`.
  bool publish_next();
  /// Piece `at` (in elements) of broadcast or all-reduce `args` (in_pieces()): up to a slot's
  /// payload of its output and the input that goes with it.
  [[nodiscard]] static CollectiveArgs piece_of(const CollectiveArgs& args, std::size_t at) noexcept;
  /// Elements of `args`' type in one piece: kPayloadBytes is a whole number of them, for every type.
  [[nodiscard]] static std::size_t piece_elements(const CollectiveArgs& args) noexcept {
    return kPayloadBytes / size_of(args.output.type);
  }
  /// start()'s work, under `lock_`: starts `args` as operation `op`; true where it finished
  /// inside the call.
  bool start_locked(std::int64_t op, const CollectiveArgs& args, const CallRecord& record,
                    std::shared_ptr<const void> buffers);

  std::shared_ptr<SharedMemoryRegistry> segments_;  ///< outlives own_ and the peers' mappings
  std::shared_ptr<SharedMemoryRegistry> shared_buffers_;  ///< Communicator::allocate_shared's; may be null
  std::shared_ptr<SharedSegment> own_;
  std::vector<std::byte*> bases_;  ///< every rank's segment, mapped here
  int rank_;
  int size_;
  RankProcesses processes_;  ///< every rank's process, to tell a rank that has ended from a slow one
  ErrorContext where_;  ///< built once: an error is rare, a call is not
  std::size_t all_to_allv_capacity_;  ///< what an all_to_allv's table and blocks may take of a slot
  EagerStoreChoice stores_;  ///< how each operation's payload is stored
  /// Per header's share of payload bytes (held_start_index()), a broadcast root's last payload
  /// there; a payload that used a slot's whole payload bytes is kept as its first share's.
  std::array<HeldPayloadStart, kHeaders> held_starts_{};
  /// Per slot, the last operation this rank published whose payload used the whole payload bytes
  /// (or wrote past its share: a segment's reference at the slot's end); -1 before any.
  std::array<std::int64_t, kSlots> last_whole_payload_{};
  /// swap_half_with()'s bounce buffer and a page's slack, made at its first swap.
  std::vector<std::byte> swap_bounce_;
  /// From what size a root lends a broadcast's buffer that lies in a shared segment
  /// (shared_broadcast_lending_threshold()).
  std::size_t lend_shared_broadcasts_from_;
  AllToAllvOverflowForecast forecast_;  ///< whether this rank hands its next all_to_allv over at once
  /// Held by a call and by tests of its works, which progress threads may run: a spin lock, since
  /// a pthread mutex's lock and unlock were a tenth of a small call's instructions.
  SpinLock lock_;
  std::int64_t issued_ = 0;
  std::int64_t finished_ = 0;  ///< operations finished here, also in the shared counter
  /// Each peer's `finished` counter as last loaded here (counters only grow).
  mutable std::vector<std::int64_t> peers_finished_;
  std::deque<Pending> pending_;
  std::deque<Lent> lent_;
  std::map<std::int64_t, Error> failures_;  ///< finished operations whose ranks disagreed, until asked
  std::vector<std::int64_t> handed_over_;   ///< finished all_to_allv operations handed over, until asked
  /// Finishes the peers' operations from any wait of this process where payloads may be read
  /// from their writers' buffers; last, so that it goes first.
  std::unique_ptr<ProgressHook> progress_hook_;
};

}  // namespace meshcomm::detail
