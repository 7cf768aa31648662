#pragma once

// How the eager slots' payloads are stored: with plain stores, or with streaming ones that send
// the lines to memory instead of leaving them modified in the writer's cache. A peer reads a
// payload straight after it is written, so the faster stores are the ones whose lines the peer's
// core fetches faster; that depends on the machine and on its state, not on the size alone. On
// the 2-core VM of perftests/README.md a 64 KiB broadcast through the slots took 8-11 us with
// plain stores and 5-7 with streaming ones, and 30-42 us against 7-8 in the VM's slow periods,
// in which lines passed between the two cores move several times slower (timed step by step in
// an all-to-allv: the writer's plain stores into slot lines its peer had read took 3-6x as long,
// the reader's copy out far less); at 4-8 KiB plain stores were level or faster. So where a reader copies kMeasuredFrom or more out of a payload the
// choice is measured: in the broadcast, the all-gather, the all-to-all and the all-to-allv
// (eager_store_choice.cpp says why the reductions are left out).
//
// The rank after a payload's writer decides how the writer stores it, per kind, placement and
// size class, since a payload's stores show in its readers' time, not its writer's: it times its
// own reading of that payload and adds the time the writer's writing took (the writer states it
// in its slot). The writer is the root of a broadcast, and every rank of the other kinds: there
// each rank decides for the rank before it. The decisions lie in a table in the decider's
// segment: an entry per kind, placement and class, one word holding the way before an operation
// number, the way from it on, and that number. A decision made as the decider finishes operation
// n takes effect from n + lag, where lag is the number of slots: the writer cannot publish that
// operation before it has seen the decider finish n, so it stores each payload the way the
// decider times it under.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collective_args.hpp"
#include "measured_choice.hpp"

namespace meshcomm::detail {

/// One communicator's choice of stores for its eager payloads. Not thread-safe: the mailbox
/// calls it under its lock.
class EagerStoreChoice {
 public:
  /// Payloads from which each reader copies this much or more are measured; others take plain
  /// stores.
  static constexpr std::size_t kMeasuredFrom = 16 * 1024;
  /// The largest payload measured (the eager slots' payload).
  static constexpr std::size_t kMeasuredUpTo = 64 * 1024;
  /// Bytes of the decision table each rank's segment holds, a whole number of cache lines; the
  /// table must start zeroed (plain stores everywhere).
  static constexpr std::size_t kTableBytes = 192;

  /// `tables`: every rank's decision table, mapped here; `rank`: this rank; `lag`: operations
  /// between a decision and its effect (the mailbox's slots). `measured` false: plain stores for
  /// every payload (MESHCOMM_STREAMING_STORES=always), nothing timed. `ranks_share_cores`: the
  /// ranks outnumber the cores they may run on, and only broadcasts are measured.
  EagerStoreChoice(std::vector<std::byte*> tables, int rank, int lag, bool measured, bool ranks_share_cores = false);
  EagerStoreChoice(const EagerStoreChoice&) = delete;
  EagerStoreChoice& operator=(const EagerStoreChoice&) = delete;
  ~EagerStoreChoice();

  /// Whether operation `op` (`args`, publishing `bytes`) stores its payload with streaming stores.
  [[nodiscard]] bool streams(const CollectiveArgs& args, std::size_t bytes, std::int64_t op) const noexcept;
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
  /// rank's reading of that payload), and decides the timed writer's stores of its kind, placement
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

  std::vector<std::byte*> tables_;
  int rank_;
  int lag_;
  bool measured_;
  bool ranks_share_cores_;
  /// This rank's choices as a decider, per table entry; made when first needed.
  std::vector<std::unique_ptr<MeasuredChoice>> choices_;
};

}  // namespace meshcomm::detail
