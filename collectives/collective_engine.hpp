#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "algorithm_list.hpp"
#include "call_fingerprint.hpp"
#include "selection.hpp"

namespace meshcomm::detail {

/// The algorithms and the selection table of a family of communicators: picks the algorithm of
/// each call and starts it. A collective that fails part-way leaves its peers out of step, so any
/// failure of a started collective makes the communicator fatal (see docs/errors.md).
class CollectiveEngine {
 public:
  /// `debug_exchange`: what the ranks compare before each collective (MESHCOMM_DEBUG; see
  /// exchange_and_compare_fingerprints).
  CollectiveEngine(AlgorithmList algorithms, SelectionTable table, DebugExchange debug_exchange = DebugExchange::off);

  /// The built-in algorithms, the measured table, and MESHCOMM_ALGO's forced names.
  static std::shared_ptr<const CollectiveEngine> from_environment();

  /// The algorithm for `args`: `requested` if not empty, else the forced one, else the table's.
  /// Throws Error(invalid_argument) for an unknown name, Error(unsupported) if the named
  /// algorithm cannot run the call (with its reason).
  [[nodiscard]] const Algorithm& choose(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                        std::string_view requested) const {
    if (requested.empty() && !table_.forced(args.kind)) {
      const std::size_t bytes = args.bytes();
      for (const auto& row : rows(args.kind, comm.backend_kind())) {
        if (row.rule.holds(bytes, comm.size(), comm.shares_one_host(), args.in_place) &&
            row.algorithm->runs(args, comm)) {
          return *row.algorithm;
        }
      }
    }
    return choose_by_name_or_list(comm, args, requested);
  }

  /// The algorithm that takes `args` over where `current` finds, part-way, that it cannot run it
  /// (Algorithm::start_on_tags, or Algorithm::start_in_slots_if): the table's first row for the
  /// call that names another one which can take over, else the first such in the list. The same
  /// on every rank that agrees about the call.
  [[nodiscard]] const Algorithm& takeover_for(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                              const Algorithm& current) const;
  /// The algorithm after `takeover` (takeover_for's answer) in the same order that can take the
  /// call over on tags (Algorithm::start_on_tags), neither `current` nor `takeover` nor native;
  /// null where there is none.
  [[nodiscard]] const Algorithm* runner_up_for(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                               const Algorithm& current, const Algorithm& takeover) const;

  /// Numbers the collective (`args.call`), then chooses and starts it.
  [[nodiscard]] Work start(CommunicatorImpl& comm, CollectiveArgs& args, std::string_view requested) const;

  [[nodiscard]] std::vector<std::string_view> names(CollectiveKind kind) const { return algorithms_.names(kind); }

 private:
  /// The first algorithm for `args` that `accepts`: in the table's rows that hold for the call,
  /// then in the list's order. Null where none does.
  [[nodiscard]] const Algorithm* first_in_order(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                const std::function<bool(const Algorithm&)>& accepts) const;
  /// start() for every call that does not go straight to the backend's own collective.
  [[nodiscard]] Work start_chosen(CommunicatorImpl& comm, const CollectiveArgs& args, std::string_view requested) const;
  /// choose() where no table row took the call: a requested or forced name, else the first
  /// algorithm in the list that runs it.
  [[nodiscard]] const Algorithm& choose_by_name_or_list(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                        std::string_view requested) const;

  /// A table row with its algorithm found once, not by name on every call.
  struct Row {
    SelectionRule rule;
    const Algorithm* algorithm;
  };
  /// The rows that apply to `kind` on `backend`.
  [[nodiscard]] const std::vector<Row>& rows(CollectiveKind kind, BackendKind backend) const noexcept {
    return rows_[static_cast<std::size_t>(kind)][static_cast<std::size_t>(backend)];
  }

  static constexpr std::size_t kKinds = 6;
  static constexpr std::size_t kBackends = 5;

  AlgorithmList algorithms_;
  SelectionTable table_;
  /// Per collective and backend, the table's rows that apply there (SelectionTable::rules_for)
  /// whose algorithm exists, in table order.
  std::array<std::array<std::vector<Row>, kBackends>, kKinds> rows_;
  /// Per collective and backend, whether a call that names no algorithm goes straight to the
  /// backend's own collective where it can run it: the unconditional algorithm is `native` and no
  /// other is forced.
  std::array<std::array<bool, kBackends>, kKinds> straight_to_native_{};
  DebugExchange debug_exchange_;
};

}  // namespace meshcomm::detail
