#include "eager_store_choice.hpp"

#include <atomic>
#include <bit>

namespace meshcomm::detail {

namespace {

constexpr int kPlacements = 2;
constexpr int kFirstClass = static_cast<int>(std::bit_width(EagerStoreChoice::kMeasuredFrom)) - 1;
constexpr int kClasses = static_cast<int>(std::bit_width(EagerStoreChoice::kMeasuredUpTo)) - kFirstClass;
constexpr int kEntries = kPlacements * kClasses;
static_assert(kEntries * sizeof(std::uint64_t) <= EagerStoreChoice::kTableBytes);

/// A table entry: the way before operation `from`, and from it on.
struct Entry {
  int before = 0;
  int after = 0;
  std::int64_t from = 0;

  [[nodiscard]] int way_at(std::int64_t op) const noexcept { return op < from ? before : after; }
  [[nodiscard]] std::uint64_t word() const noexcept {
    return (static_cast<std::uint64_t>(from) << 2) | (static_cast<std::uint64_t>(after) << 1) |
           static_cast<std::uint64_t>(before);
  }
  static Entry of(std::uint64_t word) noexcept {
    return {.before = static_cast<int>(word & 1), .after = static_cast<int>((word >> 1) & 1),
            .from = static_cast<std::int64_t>(word >> 2)};
  }
};

int entry_index(const CollectiveArgs& args, std::size_t bytes) noexcept {
  const int size_class = static_cast<int>(std::bit_width(bytes)) - 1 - kFirstClass;
  return (args.in_place ? 1 : 0) * kClasses + size_class;
}

std::atomic_ref<std::uint64_t> entry_word(std::byte* table, int index) noexcept {
  return std::atomic_ref<std::uint64_t>(reinterpret_cast<std::uint64_t*>(table)[index]);
}

}  // namespace

EagerStoreChoice::EagerStoreChoice(std::vector<std::byte*> tables, int rank, int lag, bool measured)
    : tables_(std::move(tables)), rank_(rank), lag_(lag), measured_(measured), choices_(kEntries) {}

EagerStoreChoice::~EagerStoreChoice() = default;

bool EagerStoreChoice::measured(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  // Only the broadcast's: there the root's writing and one reader's reading are the whole call.
  // The other kinds' payloads are read by every rank as it also writes; on the 2-core VM their
  // calls ran level either way at 64 KiB, and at 16 KiB the trials' changes of way cost more than
  // they found (all-gather and reduce-scatter 10-25% slower than with plain stores alone). Timed
  // instead over rank 0's whole call, from its writing to its result, its plain pieces took 3x
  // their calls' time end to end (its peers' polling and their skew are in that span), so no
  // choice made from it could be trusted.
  return measured_ && args.kind == CollectiveKind::broadcast && bytes >= kMeasuredFrom && bytes <= kMeasuredUpTo;
}

int EagerStoreChoice::decider(const CollectiveArgs& args) const noexcept {
  return (args.root + 1) % static_cast<int>(tables_.size());
}

int EagerStoreChoice::timed_writer(const CollectiveArgs& args) const noexcept { return args.root; }

bool EagerStoreChoice::streams(const CollectiveArgs& args, std::size_t bytes, std::int64_t op) const noexcept {
  if (!measured(args, bytes)) return false;
  const auto word = entry_word(tables_[decider(args)], entry_index(args, bytes)).load(std::memory_order_acquire);
  return Entry::of(word).way_at(op) == 1;
}

bool EagerStoreChoice::times_writing(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  return measured(args, bytes) && timed_writer(args) == rank_;
}

bool EagerStoreChoice::decides(const CollectiveArgs& args, std::size_t bytes) const noexcept {
  return measured(args, bytes) && decider(args) == rank_;
}

void EagerStoreChoice::record(const CollectiveArgs& args, std::size_t bytes, std::int64_t op,
                              std::chrono::nanoseconds took) {
  const int index = entry_index(args, bytes);
  auto word = entry_word(tables_[rank_], index);
  const Entry entry = Entry::of(word.load(std::memory_order_relaxed));  // written only here
  // Until every slot has held a payload stored the new way, an operation's lines are in the state
  // the other way left them in: the first plain stores after streaming ones took 2-3x as long as
  // plain stores did in a run of them (16 KiB reduce-scatter, the 2-core VM). Such operations, and
  // those stored before a decision takes effect, say nothing about either way.
  if (op < entry.from + lag_) return;
  auto& choice = choices_[static_cast<std::size_t>(index)];
  if (!choice) {
    // A piece slowed by something else (a context switch, a page fault) moves the figure by a
    // quarter only: the eager pieces are a few microseconds each, and the speeds that matter
    // here change over seconds. A trial's slower way runs from its decision's effect until the
    // decision back takes effect (two lags), and each of the two changes leaves a lag of pieces
    // that find the other way's lines, at up to twice a piece's time.
    choice = std::make_unique<MeasuredChoice>(MeasuredChoice::Settings{
        .latest_piece_weight = 0.25,
        .pieces_per_trial = static_cast<std::uint32_t>(2 * lag_),
        .pieces_lost_switching = 2.0 * lag_,
    });
  }
  choice->record(bytes, entry.after, took);
  const int next = choice->choose(bytes);
  if (next == entry.after) return;
  // Published before this rank marks `op` read, so that every rank sees it before it may publish
  // operation op + lag.
  word.store(Entry{.before = entry.after, .after = next, .from = op + lag_}.word(), std::memory_order_release);
}

}  // namespace meshcomm::detail
