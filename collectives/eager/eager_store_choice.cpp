#include "eager_store_choice.hpp"

#include <atomic>
#include <bit>

#include <fmt/format.h>

#include "eager_all_to_allv.hpp"
#include "environment.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

namespace {

constexpr int kMeasuredKinds = 4;  // broadcast, all-gather, all-to-all, all-to-allv
constexpr int kPlacements = 2;
constexpr int kFirstClass = static_cast<int>(std::bit_width(EagerStoreChoice::kMeasuredFrom)) - 1;
constexpr int kClasses = static_cast<int>(std::bit_width(EagerStoreChoice::kMeasuredUpTo)) - kFirstClass;
constexpr int kEntries = kMeasuredKinds * kPlacements * kClasses;
static_assert(kEntries * sizeof(std::uint64_t) <= EagerStoreChoice::kTableBytes);

/// A table entry: the way (a PayloadWay) before operation `from`, and from it on.
struct Entry {
  int before = 0;
  int after = 0;
  std::int64_t from = 0;

  static constexpr int kWayBits = 2;
  static constexpr std::uint64_t kWayMask = (1U << kWayBits) - 1;

  [[nodiscard]] int way_at(std::int64_t op) const noexcept { return op < from ? before : after; }
  [[nodiscard]] std::uint64_t word() const noexcept {
    return (static_cast<std::uint64_t>(from) << (2 * kWayBits)) | (static_cast<std::uint64_t>(after) << kWayBits) |
           static_cast<std::uint64_t>(before);
  }
  static Entry of(std::uint64_t word) noexcept {
    return {.before = static_cast<int>(word & kWayMask), .after = static_cast<int>((word >> kWayBits) & kWayMask),
            .from = static_cast<std::int64_t>(word >> (2 * kWayBits))};
  }
};
static_assert(static_cast<std::uint64_t>(PayloadWay::read_from_writer) <= Entry::kWayMask);

/// An entry holds each way as a code: the way's own number, but for plain stores and reads from
/// the writer's buffer swapped where reads are offered (EagerStoreChoice::offers_reads()), so
/// that such an entry's zeroed start is a read. The same swap turns a code into its way.
int swap_plain_and_read_where(int value, bool reads_offered) noexcept {
  constexpr int kPlain = static_cast<int>(PayloadWay::plain_stores);
  constexpr int kRead = static_cast<int>(PayloadWay::read_from_writer);
  if (!reads_offered || (value != kPlain && value != kRead)) return value;
  return value == kPlain ? kRead : kPlain;
}

/// The measured kinds' index in the table; -1 for the others, which have no entries.
int kind_index(CollectiveKind kind) noexcept {
  switch (kind) {
    case CollectiveKind::broadcast: return 0;
    case CollectiveKind::all_gather: return 1;
    case CollectiveKind::all_to_all: return 2;
    case CollectiveKind::all_to_allv: return 3;
    default: return -1;
  }
}

int entry_index(const CollectiveArgs& args, std::size_t bytes) noexcept {
  const int size_class = static_cast<int>(std::bit_width(bytes)) - 1 - kFirstClass;
  return (kind_index(args.kind) * kPlacements + (args.in_place ? 1 : 0)) * kClasses + size_class;
}

std::atomic_ref<std::uint64_t> entry_word(std::byte* table, int index) noexcept {
  return std::atomic_ref<std::uint64_t>(reinterpret_cast<std::uint64_t*>(table)[index]);
}

}  // namespace

std::string_view to_string(PeerReads reads) noexcept {
  switch (reads) {
    case PeerReads::never: return "never";
    case PeerReads::automatic: return "auto";
    case PeerReads::always: return "always";
  }
  return "?";
}

PeerReads peer_reads_from_environment() {
  const auto setting = environment_variable("MESHCOMM_EAGER_PEER_READS");
  if (!setting || setting->empty()) return PeerReads::automatic;
  for (auto reads : {PeerReads::never, PeerReads::automatic, PeerReads::always}) {
    if (*setting == to_string(reads)) return reads;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_EAGER_PEER_READS = '{}' is not a choice; valid: auto (the default: the eager "
                          "all-gathers, all-to-alls and all-to-allvs out of place in which each reader copies 32 KiB "
                          "or more of a payload read it from the writer's buffer where the ranks have cores of their "
                          "own, within a slot's size until the slots measure faster, and the all-to-alls in place "
                          "past the slots swap their blocks between the ranks' buffers wherever they run), never or "
                          "always (at every size beyond a slot's inline bytes, wherever the ranks run)",
                          *setting),
              {.operation = "create"});
}

EagerStoreChoice::EagerStoreChoice(std::vector<std::byte*> tables, int rank, int lag, bool measured,
                                   bool ranks_share_cores, PeerReads peer_reads, std::size_t all_to_allv_capacity)
    : tables_(std::move(tables)),
      rank_(rank),
      lag_(lag),
      measured_(measured),
      ranks_share_cores_(ranks_share_cores),
      peer_reads_(peer_reads),
      all_to_allv_capacity_(all_to_allv_capacity),
      store_choices_(kEntries),
      read_choices_(kEntries) {}

EagerStoreChoice::~EagerStoreChoice() = default;

std::size_t EagerStoreChoice::classed_bytes(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept {
  if (args.kind != CollectiveKind::all_to_allv) return bytes;
  // The ranks' payloads differ in size; the block the timed writer sends its decider is the one
  // part both know the size of, from their own layouts.
  const auto& layout = args.layout;
  const auto element = size_of(args.input.type);
  if (side == Side::decider) return layout.recv_counts[static_cast<std::size_t>(timed_writer(args))] * element;
  const std::size_t block = layout.send_counts[static_cast<std::size_t>(decider_of(rank_))] * element;
  return block <= bytes ? block : 0;  // where the blocks did not fit the slot, only the table is there
}

bool EagerStoreChoice::reads_from_writer(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  if (peer_reads_ == PeerReads::never || tables_.size() < 2) return false;
  bool past_the_slot = bytes > kMeasuredUpTo;
  std::size_t each_reader_copies = bytes;
  switch (args.kind) {
    case CollectiveKind::all_gather: break;
    case CollectiveKind::all_to_all:
      each_reader_copies = bytes / tables_.size();
      // In place each pair of ranks swaps its blocks (eager_mailbox.hpp), but only a payload past
      // the slot's: at two ranks on the AMD EPYC guest (2026-12-01, `alltoall_perf -b 16K -e 128K
      // -f 2`, two alternated launches each with MESHCOMM_EAGER_PEER_READS=never and auto, in
      // place, mpi_best / time) 64 KiB ran 2.65-3.89x through the slots and 1.35-1.56x swapped,
      // 128 KiB, past the slots, 1.51-1.81x swapped and 0.97-1.08x by pairwise.
      if (args.in_place && peer_reads_ != PeerReads::always && !past_the_slot) return false;
      break;
    case CollectiveKind::all_to_allv:
      if (args.in_place) return false;
      // Blocks past the slot would hand the call over to pairwise, whose sends Open MPI or UCX
      // move by the same one copy a block, behind the matching of every message; read from the
      // input, wherever the ranks run. Three and four ranks on the Intel Xeon guest's two cores
      // (2026-12-02, `alltoallv_perf --algo auto,pairwise -b 32K -e 4M -f 2`, the library with
      // and without this, alternated launches, mpi_best / time): on mpi (two launches each)
      // 0.95-1.39x at 56-448 KiB where the hand-over had run 0.77-0.97x, level from 1 MiB
      // (0.94-1.04x against 0.92-1.01x; three ranks at 512 KiB 0.91-0.95x both ways); on ucx (two
      // each, to 2 MiB) 0.97-1.66x at 56-512 KiB against 0.49-1.19x.
      if (!all_to_allv_fits(args, rank_, all_to_allv_capacity_)) return true;
      past_the_slot = false;
      break;
    default: return false;
  }
  if (peer_reads_ == PeerReads::always) return true;
  // In place every rank of an all-to-all both lends its buffer and swaps with each peer's, so a
  // rank that waits for its peers' turns on the cores waits no longer than pairwise's would:
  // three and four ranks on the AMD EPYC guest's two cores (2026-12-01, `alltoall_perf --algo
  // eager,pairwise -b 96K -e 24M -f 4` with MESHCOMM_EAGER_PEER_READS=always, one launch each,
  // in place, mpi_best / time) ran the swaps at 1.40-1.65x and 1.30-1.80x, pairwise at
  // 0.86-1.45x and 0.80-1.49x, level or behind only at 96 KiB.
  const bool swaps = args.kind == CollectiveKind::all_to_all && args.in_place;
  return (!ranks_share_cores_ || swaps) && past_the_slot && each_reader_copies >= kReadFromWriterFrom;
}

bool EagerStoreChoice::measured(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept {
  if (!measured_ || tables_.size() < 2) return false;
  bytes = classed_bytes(args, bytes, side);
  if (bytes > kMeasuredUpTo) return false;
  // A broadcast's root writes and its readers read; the whole call is that. In the all-gather and
  // the all-to-all every rank writes its payload and copies its peers' out, and the decider times
  // its copy of one payload, or of its block of one: an all-to-all's reader copies a size-th of
  // the payload, and where that is below kMeasuredFrom the choice cost more than it found (at two
  // ranks, 16 KiB payloads ran 16% slower measured than plain in 20 alternated launches); an
  // all-to-allv's decider copies the block its writer sends it, measured from kMeasuredFrom.
  // Where the ranks outnumber their cores, every writer's choice has its own trials, and the
  // readers' copies come in turn rather than at once: four ranks on two cores ran the 64 KiB
  // all-to-all 15-20% and the all-gather of 64 KiB per rank 5-12% slower measured, and no slow
  // launch was seen there for the measuring to find, while the broadcast, one writer, ran
  // 1.3-1.5x faster at 32-64 KiB.
  // The reductions are left out: their ranks read every payload in one pass of sums, so no
  // payload's reading can be timed apart, and timed over rank 0's whole call, from its writing to
  // its result, plain pieces took 3x their calls' time end to end (its peers' polling and their
  // skew are in that span), so no choice made from it could be trusted.
  switch (args.kind) {
    case CollectiveKind::broadcast: return bytes >= kMeasuredFrom;
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_allv: return !ranks_share_cores_ && bytes >= kMeasuredFrom;
    case CollectiveKind::all_to_all: return !ranks_share_cores_ && bytes / tables_.size() >= kMeasuredFrom;
    default: return false;
  }
}

bool EagerStoreChoice::offers_reads(const CollectiveArgs& args, std::size_t bytes, Side side) const noexcept {
  const bool exchange = args.kind == CollectiveKind::all_gather ||
                        ((args.kind == CollectiveKind::all_to_all || args.kind == CollectiveKind::all_to_allv) &&
                         !args.in_place);
  if (!exchange || peer_reads_ != PeerReads::automatic || !measured(args, bytes, side)) return false;
  // By the size class, which the writer and its decider see alike.
  const std::size_t size_class = std::bit_floor(classed_bytes(args, bytes, side));
  const std::size_t each_reader_copies =
      args.kind == CollectiveKind::all_to_all ? size_class / tables_.size() : size_class;
  return each_reader_copies >= kReadFromWriterFrom;
}

int EagerStoreChoice::decider_of(int writer) const noexcept { return (writer + 1) % static_cast<int>(tables_.size()); }

int EagerStoreChoice::timed_writer(const CollectiveArgs& args) const noexcept {
  if (args.kind == CollectiveKind::broadcast) return args.root;
  const int size = static_cast<int>(tables_.size());
  return (rank_ + size - 1) % size;
}

PayloadWay EagerStoreChoice::way(const CollectiveArgs& args, std::size_t bytes, std::int64_t op) const noexcept {
  if (reads_from_writer(args, bytes)) return PayloadWay::read_from_writer;
  if (!measured(args, bytes, Side::writer)) return PayloadWay::plain_stores;
  const int writer = args.kind == CollectiveKind::broadcast ? args.root : rank_;
  const std::size_t classed = classed_bytes(args, bytes, Side::writer);
  const auto word = entry_word(tables_[decider_of(writer)], entry_index(args, classed)).load(std::memory_order_acquire);
  if (!offers_reads(args, bytes, Side::writer)) {
    const auto stores = static_cast<PayloadWay>(Entry::of(word).way_at(op));
    return stores == PayloadWay::streaming_stores ? stores : PayloadWay::plain_stores;
  }
  return static_cast<PayloadWay>(swap_plain_and_read_where(Entry::of(word).way_at(op), true));
}

bool EagerStoreChoice::decided_read_from_writer(const CollectiveArgs& args, std::size_t bytes,
                                                std::int64_t op) const noexcept {
  if (!offers_reads(args, bytes, Side::decider)) return false;
  const std::size_t classed = classed_bytes(args, bytes, Side::decider);
  const Entry entry = Entry::of(entry_word(tables_[rank_], entry_index(args, classed)).load(std::memory_order_relaxed));
  return static_cast<PayloadWay>(swap_plain_and_read_where(entry.way_at(op), true)) == PayloadWay::read_from_writer;
}

bool EagerStoreChoice::times_writing(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  return measured(args, bytes, Side::writer) && (args.kind != CollectiveKind::broadcast || args.root == rank_) &&
         !reads_from_writer(args, bytes);
}

bool EagerStoreChoice::decides(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  return measured(args, bytes, Side::decider) && decider_of(timed_writer(args)) == rank_;
}

void EagerStoreChoice::record(const CollectiveArgs& args, std::size_t bytes, std::int64_t op,
                              std::chrono::nanoseconds took) {
  const bool reads_offered = offers_reads(args, bytes, Side::decider);
  bytes = classed_bytes(args, bytes, Side::decider);
  const int index = entry_index(args, bytes);
  auto word = entry_word(tables_[rank_], index);
  const Entry entry = Entry::of(word.load(std::memory_order_relaxed));  // written only here
  // Until every slot has held a payload stored the new way, an operation's lines are in the state
  // the other way left them in: the first plain stores after streaming ones took 2-3x as long as
  // plain stores did in a run of them (16 KiB reduce-scatter, the 2-core VM). Such operations, and
  // those stored before a decision takes effect, say nothing about either way.
  if (op < entry.from + lag_) return;
  auto made = [&](std::vector<std::unique_ptr<MeasuredChoice>>& choices, bool reads) -> MeasuredChoice& {
    auto& choice = choices[static_cast<std::size_t>(index)];
    if (!choice) choice = std::make_unique<MeasuredChoice>(choice_settings(args, reads));
    return *choice;
  };
  const int used = swap_plain_and_read_where(entry.after, reads_offered);  // the way op took
  const bool read = used == static_cast<int>(PayloadWay::read_from_writer);
  MeasuredChoice& stores = made(store_choices_, false);
  if (!read) stores.record(bytes, used, took);
  int next = used;
  if (reads_offered) {
    // Way 0 of this choice is reading, way 1 the slots.
    MeasuredChoice& reads = made(read_choices_, true);
    reads.record(bytes, read ? 0 : 1, took);
    next = reads.choose(bytes) == 0 ? static_cast<int>(PayloadWay::read_from_writer) : stores.choose(bytes);
  } else if (!read) {
    next = stores.choose(bytes);
  }
  next = swap_plain_and_read_where(next, reads_offered);  // as the entry holds it
  if (next == entry.after) return;
  // Published before this rank marks `op` read, so that every rank sees it before it may publish
  // operation op + lag.
  word.store(Entry{.before = entry.after, .after = next, .from = op + lag_}.word(), std::memory_order_release);
}

MeasuredChoice::Settings EagerStoreChoice::choice_settings(const CollectiveArgs& args, bool reads) const noexcept {
  // A piece slowed by something else (a context switch, a page fault) moves the figure by a
  // quarter only: the eager pieces are a few microseconds each, and the speeds that matter here
  // change over seconds. A trial's slower way runs from its decision's effect until the decision
  // back takes effect (two lags), and each of the two changes leaves a lag of pieces that find
  // the other way's lines, at up to twice a piece's time. Such changes are what the choice costs,
  // so it turns only for a way 20% faster, and a piece weighs as at most twice its way's figure:
  // outside the VM's slow periods a 32 KiB all-to-all's two stores measured within 10-30% of each
  // other, and without these it turned every 10-40 operations on that noise and on single pieces
  // slowed 10-30x (the calls about 10% slower than with plain stores alone).
  //
  // The exchanges' first streamed stores come after 128 pieces of plain ones: in launches of 120
  // calls per class (`compare_mpi.sh`'s) trying them cost 6-12% where plain stores served, while
  // the slow periods they are for last far longer than that. The broadcast's come at once: its
  // streamed stores were faster in most launches of 58 calls. So does the exchanges' trial of the
  // slots against reads, whose gaps are wider and lasting: on the AMD EPYC guest of
  // perftests/README.md reads took 1.6-2.4x as long as the slots at 32 KiB a reader, where the
  // guests of kReadFromWriterFrom's figures ran them 1.1-1.3x faster. There the slots' first timed
  // payloads after reads ran slower than their next ones: of the first sixteen (a lag's) of a
  // 64 KiB all-gather out of place, logged on both ranks in six launches, the first eight took
  // 2.6-5.0 us and the last four 2.1-3.2, against the reads' 3.8-6.1; in place the second took
  // 140-170 us in three launches of six. Weighed by their first two, the slots lost to the reads
  // in one placement or both in four launches of six, and a way measured behind is retried only
  // after hundreds of calls of its class. So a run of this choice's slower way weighs the last of
  // a lag's payloads (trial_run): the trial, which runs through the lag after it takes effect
  // unweighed, grows from two lags to three.
  const bool copies = args.kind != CollectiveKind::broadcast && !reads;
  return {
      .latest_piece_weight = 0.25,
      .pieces_per_trial = static_cast<std::uint32_t>(2 * lag_),
      .pieces_lost_switching = 2.0 * lag_,
      .switch_margin = 0.2,
      .largest_piece_over_figure = 2.0,
      .way0_pieces_first = copies ? 128U : 0U,
      .trial_run = reads ? static_cast<std::uint32_t>(lag_) : 1U,
  };
}

}  // namespace meshcomm::detail
