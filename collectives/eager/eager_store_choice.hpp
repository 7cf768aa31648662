#pragma once

// How the eager slots' payloads reach their readers: copied into the slot with plain stores, or
// with streaming ones that send the lines to memory instead of leaving them modified in the
// writer's cache, or not copied at all: the readers read them straight out of the writer's own
// buffer (a kernel copy from another process, process_vm_readv, as Open MPI's single copy does),
// one copy where the slots take two. A peer reads a payload straight after it is written, so the
// faster stores are the ones whose lines the peer's core fetches faster; that depends on the
// machine and on its state, not on the size alone. On the 2-core VM of perftests/HISTORY.md a
// 64 KiB broadcast through the slots took 8-11 us with plain stores and 5-7 with streaming ones,
// and 30-42 us against 7-8 in the VM's slow periods, in which lines passed between the two cores
// move several times slower (timed step by step in an all-to-allv: the writer's plain stores into
// slot lines its peer had read took 3-6x as long, the reader's copy out far less); at 4-8 KiB
// plain stores were level or faster. So where a reader copies kMeasuredFrom or more out of a
// payload the stores are measured: in the broadcast, the all-gather, the all-to-all and the all-to-allv
// (eager_store_choice.cpp says why the reductions are left out).
//
// The writer's buffer is read only in the exchanges: the all-gather, the all-to-all and the
// all-to-allv out of place, where every rank both writes and reads, and only where each reader
// copies kReadFromWriterFrom or more of the payload and the ranks have cores of their own (an
// all-to-allv's blocks past the writer's slot at any size and wherever they run, since they would
// hand the call over to pairwise). Past the slot's payload it is the path's one way. Within it,
// it is the first way of a choice measured as the stores' is: the kernel copy out of the writer's
// buffer against the slot's copy in and copy out, whose speeds differ by machine and state. On
// the AMD EPYC guest of perftests/README.md (2026-12-02, two ranks, `all_gather_perf --algo
// eager`, two alternated launches each with MESHCOMM_EAGER_PEER_READS=never and the fixed rule
// before this choice, which read from 32 KiB a reader) the all-gather of 32 KiB a rank took
// 3.3-3.8 us through the slots against 6.1-6.3 read, 4.0-4.8 against 9.8-11.6 with new data in
// every call, and the all-to-allv of 24 KiB blocks 3.7 against 6.3-7.4; on the AMD guest of
// 2026-11-29 reads ran faster (kReadFromWriterFrom). A writer whose peers read its buffer cannot
// finish before they have (EagerMailbox): that costs ranks that share cores each other's turns,
// so there nothing within the slot is read (nor measured). In place, where a rank's block for a
// peer is also where that peer's block for it lands, the all-to-all's two ranks of each pair swap
// their two blocks between their buffers, each one half (EagerMailbox), past the slots and
// wherever the ranks run: every rank both lends and swaps. Such payloads are neither stored nor
// timed.
//
// A broadcast's root never lends a plain buffer, at any size (larger ones pass in pieces:
// EagerMailbox::start_in_pieces). It would lose its early return, and its readers' copies leave
// the buffer's lines in their caches, for the root's next writes to take back: on the 2-core VM
// at two ranks, a root's 256 KiB memcpy into its buffer before each broadcast took 28.7 us where
// the reader had copied that buffer in one kernel copy (Open MPI's tree, or the slots' payload
// read from the root's buffer), 5.0 us where it went through the slots, and the call itself 23
// against 13 us. Read piece by piece from the root's buffer, an unchanging 128 KiB-1 MiB buffer
// ran 15-25% slower than Open MPI's single copy of the whole (2026-11-29). Read whole at the
// first piece it ran level with Open MPI, and in some launches in place (a buffer the root does
// not write between calls) 1.5x the slots' pieces; but a choice measured by the rank after the
// root cannot see what its reads cost the root's next writes: at 128 KiB, written before each
// call, its reads measured 10-12 us against the slots' 10-15 while the calls took 24-39 us
// against 9-12, so it is not offered. A root whose buffer lies in a shared segment
// (Communicator::allocate_shared) lends it, for its readers to copy through their mappings, as
// the shm broadcast copies such a buffer (EagerMailbox::lends_shared_broadcast).
//
// The rank after a payload's writer decides how the writer passes it on, per kind, placement and
// size class, since a payload's stores show in its readers' time, not its writer's: it times its
// own reading of that payload and adds the time the writer's writing took (the writer states it
// in its slot; nothing where it left the payload in its buffer: the reading is all of it). The
// writer is the root of a broadcast, and every rank of the other kinds: there
// each rank decides for the rank before it. The decisions lie in a table in the decider's
// segment: an entry per kind, placement and class, one word holding the way before an operation
// number, the way from it on, and that number. Where reading the writer's buffer is offered, one
// measured choice weighs it against the slots, and another, fed by the slots' payloads alone,
// weighs plain stores against streaming ones. A decision made as the decider finishes operation
// n takes effect from n + lag, where lag is the number of slots: the writer cannot publish that
// operation before it has seen the decider finish n, so it stores each payload the way the
// decider times it under. Each reader learns from the writer's slot whether the payload is there.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "collective_args.hpp"
#include "measured_choice.hpp"

namespace meshcomm::detail {

/// How a writer passes an eager payload on.
enum class PayloadWay : int {
  plain_stores = 0,      ///< copied into its slot with plain stores
  streaming_stores = 1,  ///< copied into its slot with streaming stores
  read_from_writer = 2,  ///< left in the writer's buffer, which each reader copies from
};

/// Whether readers copy payloads from their writers' buffers (MESHCOMM_EAGER_PEER_READS).
enum class PeerReads {
  never,      ///< every payload goes through the slots
  automatic,  ///< from kReadFromWriterFrom a reader, where the ranks have cores of their own, within the
              ///< slot's payload until the slots measure faster (the default; an all-to-all in place
              ///< past the slots, and an all-to-allv's blocks past its writer's slot, wherever they run)
  always,     ///< every exchange's payload, at every size and wherever the ranks run
};

/// The setting's name in MESHCOMM_EAGER_PEER_READS: "never", "auto" or "always".
std::string_view to_string(PeerReads reads) noexcept;

/// MESHCOMM_EAGER_PEER_READS: `auto` (the default), `never` or `always`; throws
/// invalid_argument naming the text otherwise.
PeerReads peer_reads_from_environment();

/// One communicator's choice of ways for its eager payloads. Not thread-safe: the mailbox calls
/// it under its lock.
class EagerStoreChoice {
 public:
  /// Payloads from which each reader copies this much or more are measured; others take plain
  /// stores.
  static constexpr std::size_t kMeasuredFrom = 16 * 1024;
  /// The largest payload measured (the eager slots' payload).
  static constexpr std::size_t kMeasuredUpTo = 64 * 1024;
  /// Where an exchange's reader copies this much or more of a payload (by its size class within
  /// the slot), the payload is left in its writer's buffer: past the slot always, within it until
  /// the slots measure faster. Below it every payload that fits goes through the slots. At two
  /// ranks on the AMD EPYC guest of 2026-11-29 and the Intel Xeon VM (`all_gather_perf`,
  /// `alltoall_perf` and `alltoallv_perf`, four alternated launches each way) payloads of 32-64
  /// KiB a reader ran 1.02-1.20x `mpi_best` read against 0.64-1.06x through the slots, and 16 KiB
  /// 1.08-1.21x read against 1.32-1.63x; on the AMD EPYC guest of 2026-12-02 the reads' trials at
  /// 16-24 KiB a reader cost the all-gather and the all-to-allv 5-30% (perftests/README.md).
  static constexpr std::size_t kReadFromWriterFrom = 32 * 1024;
  /// Bytes of the decision table each rank's segment holds, a whole number of cache lines; the
  /// table must start zeroed (every entry's first way).
  static constexpr std::size_t kTableBytes = 192;

  /// `tables`: every rank's decision table, mapped here; `rank`: this rank; `lag`: operations
  /// between a decision and its effect (the mailbox's slots). `measured` false: plain stores for
  /// every payload (MESHCOMM_STREAMING_STORES=always), nothing timed, and payloads read from their
  /// writers' buffers only where `peer_reads` is always. `ranks_share_cores`: the ranks outnumber
  /// the cores they may run on, and only broadcasts are measured. `peer_reads`: never unless every
  /// rank may read every peer's memory. `all_to_allv_capacity`: what an all_to_allv's table and
  /// blocks may take of a slot (all_to_allv_capacity()); a rank whose blocks do not fit it leaves
  /// them in its input for its peers to read, unless `peer_reads` is never.
  EagerStoreChoice(std::vector<std::byte*> tables, int rank, int lag, bool measured, bool ranks_share_cores = false,
                   PeerReads peer_reads = PeerReads::never,
                   std::size_t all_to_allv_capacity = std::numeric_limits<std::size_t>::max());
  EagerStoreChoice(const EagerStoreChoice&) = delete;
  EagerStoreChoice& operator=(const EagerStoreChoice&) = delete;
  ~EagerStoreChoice();

  /// Whether this rank's payload of `bytes` of `args` is read from its buffer whatever is measured
  /// (PayloadWay): past the slot's payload where each reader copies kReadFromWriterFrom or more of it
  /// (an all_to_allv's blocks past the slot at any size), or everywhere where `peer_reads` is
  /// always. An all_to_allv's depends on its layout alone.
  [[nodiscard]] bool reads_from_writer(const CollectiveArgs& args, std::size_t bytes) const noexcept;
  /// On the decider: whether its decisions have `timed_writer()` leave its payload of operation
  /// `op` of `args` in its buffer. `bytes`: what this rank publishes. A payload that went another
  /// way than decided (an all_to_allv's blocks past their writer's slot) is not timed.
  [[nodiscard]] bool decided_read_from_writer(const CollectiveArgs& args, std::size_t bytes,
                                              std::int64_t op) const noexcept;
  /// Whether a payload of `bytes` may take any way but plain stores; way() is plain otherwise.
  [[nodiscard]] bool chooses(std::size_t bytes) const noexcept {
    return bytes >= kMeasuredFrom || peer_reads_ == PeerReads::always;
  }
  /// The way operation `op` (`args`, publishing `bytes`) passes its payload on. Read from the
  /// writer only where its caller keeps the slot's inline bytes free for the buffer's address,
  /// and for an all_to_allv only where its blocks fit the slot.
  [[nodiscard]] PayloadWay way(const CollectiveArgs& args, std::size_t bytes, std::int64_t op) const noexcept;
  /// Whether this rank times the writing of `args`' payload (and states it in its slot): the
  /// root of a measured broadcast, every rank of a measured all-gather, all-to-all or
  /// all-to-allv. `bytes`: what this rank publishes.
  [[nodiscard]] bool times_writing(const CollectiveArgs& args, std::size_t bytes) const noexcept;
  /// Whether this rank decides the stores of `timed_writer()`'s payload of `args`, and so times
  /// its reading of it: the rank after the root of a measured broadcast, every rank of a measured
  /// all-gather, all-to-all or all-to-allv. `bytes`: what this rank publishes.
  [[nodiscard]] bool decides(const CollectiveArgs& args, std::size_t bytes) const noexcept;
  /// The rank whose payload this rank's decisions are for, and whose slot states how long the
  /// writing `decides()` counts took: the root of a broadcast, the rank before this one otherwise.
  [[nodiscard]] int timed_writer(const CollectiveArgs& args) const noexcept;
  /// On the decider: records that operation `op` took `took` (the timed writer's writing and this
  /// rank's reading of that payload), and decides the timed writer's way for its kind, placement
  /// and size class from op + lag on.
  void record(const CollectiveArgs& args, std::size_t bytes, std::int64_t op, std::chrono::nanoseconds took);

 private:
  /// Which end of a payload a rank asks from: the rank that writes it, or the one that decides
  /// how it is stored.
  enum class Side { writer, decider };

  /// The rank that decides how `writer` stores its payloads.
  [[nodiscard]] int decider_of(int writer) const noexcept;
  /// The bytes that put `args`' payload of `bytes` in its size class, as `side` sees it: `bytes`,
  /// but for an all_to_allv the block its timed writer sends its decider (0 where not written).
  [[nodiscard]] std::size_t classed_bytes(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept;
  [[nodiscard]] bool measured(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept;
  /// Whether `args`' measured payload of `bytes` is left in its writer's buffer until the slots
  /// measure faster: an exchange's out of place from kReadFromWriterFrom a reader (by its size
  /// class), where `peer_reads` is automatic.
  [[nodiscard]] bool offers_reads(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept;
  /// How a decider's choices for `args` weigh their pieces and trials: `reads` for the choice
  /// between the slots and reading the writer's buffer, else for the stores'.
  [[nodiscard]] MeasuredChoice::Settings choice_settings(const CollectiveArgs& args, bool reads) const noexcept;

  std::vector<std::byte*> tables_;
  int rank_;
  int lag_;
  bool measured_;
  bool ranks_share_cores_;
  PeerReads peer_reads_;
  std::size_t all_to_allv_capacity_;
  /// This rank's choices as a decider, per table entry, made when first needed: plain against
  /// streaming stores (way 1), from the slots' payloads; and where offers_reads(), reading the
  /// writer's buffer against the slots (way 1), from every payload.
  std::vector<std::unique_ptr<MeasuredChoice>> store_choices_;
  std::vector<std::unique_ptr<MeasuredChoice>> read_choices_;
};

}  // namespace meshcomm::detail
