#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm_list.hpp"

namespace meshcomm::detail {

/// One row of the selection table: for this collective on this backend, from `min_bytes` up to
/// (not including) `max_bytes` and within the rank range, prefer `algorithm`.
struct SelectionRule {
  CollectiveKind kind;
  BackendKind backend = BackendKind::automatic;  // automatic: any backend
  std::size_t min_bytes = 0;
  std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
  int min_ranks = 1;
  int max_ranks = std::numeric_limits<int>::max();
  /// The row holds only where the ranks share one host (CommunicatorImpl::shares_one_host): a
  /// choice that rests on each rank's own core making its single copies.
  bool one_host = false;
  /// The row holds only for calls out of place: an all-reduce's, whose ranks agree on it (it is
  /// part of the call's shape, CallRecord).
  bool out_of_place = false;
  /// The row holds only for calls in place.
  bool in_place = false;
  std::string_view algorithm;

  /// Whether the row holds for a call of `bytes` (CollectiveArgs::bytes) on `ranks` ranks, which
  /// share one host or not, in place or not.
  [[nodiscard]] bool holds(std::size_t bytes, int ranks, bool on_one_host, bool call_in_place) const noexcept {
    return bytes >= min_bytes && bytes < max_bytes && ranks >= min_ranks && ranks <= max_ranks &&
           (on_one_host || !one_host) && !(call_in_place && out_of_place) && (call_in_place || !in_place);
  }
};

/// Chooses an algorithm per call: a forced name (per call, or per collective from MESHCOMM_ALGO)
/// first, then the first matching table row whose algorithm supports the call, then the first
/// algorithm in the list that does.
class SelectionTable {
 public:
  /// The measured defaults (see perftests/README.md) with no forced names.
  static SelectionTable measured_defaults();

  /// Parses "all_gather:ring,reduce_scatter:native" and forces those names. Throws
  /// Error(invalid_argument) naming `source`, listing the valid collectives or algorithms.
  void force_from_text(std::string_view text, std::string_view source, const AlgorithmList& algorithms);

  /// The algorithm forced for `kind`, if any.
  [[nodiscard]] std::optional<std::string_view> forced(CollectiveKind kind) const {
    const auto& name = forced_[static_cast<std::size_t>(kind)];
    if (name.empty()) return std::nullopt;
    return std::string_view(name);
  }

  /// The algorithm of the first row for `kind` on `backend` if that row holds at every size, rank
  /// count, host layout and placement: it is then the table's answer for every call it can run.
  [[nodiscard]] std::optional<std::string_view> unconditional_first(CollectiveKind kind, BackendKind backend) const;

  /// The rows for `kind` that apply on `backend` (theirs, or any backend's), in table order.
  [[nodiscard]] std::vector<SelectionRule> rules_for(CollectiveKind kind, BackendKind backend) const;

  /// The first row matching the call whose algorithm `accepts`, in table order, or nothing.
  /// Allocates nothing. (The engine walks its own rows, resolved once from rules_for.)
  template <class Accepts>
  [[nodiscard]] std::optional<std::string_view> first_preferred(CollectiveKind kind, BackendKind backend,
                                                                std::size_t bytes, int ranks, bool on_one_host,
                                                                bool in_place, Accepts accepts) const {
    for (const auto& rule : rules_) {
      if (rule.kind != kind) continue;
      if (rule.backend != BackendKind::automatic && rule.backend != backend) continue;
      if (rule.holds(bytes, ranks, on_one_host, in_place) && accepts(rule.algorithm)) return rule.algorithm;
    }
    return std::nullopt;
  }

 private:
  std::vector<SelectionRule> rules_;
  std::array<std::string, 6> forced_{};
};

}  // namespace meshcomm::detail
