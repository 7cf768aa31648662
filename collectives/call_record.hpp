#pragma once

#include <array>
#include <cstdint>
#include <source_location>
#include <span>
#include <string>
#include <string_view>

#include "collective_args.hpp"

namespace meshcomm::detail {

/// What one rank is about to call, as it travels between ranks (plain data): enough to tell two
/// ranks' collective calls apart and to describe each in an error.
struct CallRecord {
  std::uint64_t call = 0;   ///< the collective's number on its communicator
  std::uint64_t count = 0;  ///< agreed_count: the count every rank of a correct call passes alike
  std::int32_t root = 0;    ///< broadcast's root, else 0
  std::uint8_t kind = 0;
  std::uint8_t type = 0;
  std::uint8_t op = 0;        ///< the reduction of reducing kinds, else sum
  std::uint8_t in_place = 0;  ///< agreed_in_place: 1 for an all-reduce in place
  /// Where the call was made ("train.cpp:42": the file's name without its directory), under
  /// MESHCOMM_DEBUG=callsite only; empty otherwise, so that it never tells calls apart.
  std::array<char, 48> site{};

  /// CallRecord::kind of a barrier, past every CollectiveKind: a barrier carries no data.
  static constexpr std::uint8_t kBarrierKind = 0xff;

  /// The record of `args` (its `call` number included, its site left empty).
  static CallRecord of(const CollectiveArgs& args);
  /// The record of the barrier that is collective number `call` on its communicator.
  static CallRecord barrier(std::uint64_t call);
  /// The same with `site` filled in from `where`.
  [[nodiscard]] CallRecord at(const std::source_location& where) const;
  /// The same without the number: what stays equal from one call of a shape to the next.
  [[nodiscard]] CallRecord shape() const {
    CallRecord record = *this;
    record.call = 0;
    return record;
  }

  bool operator==(const CallRecord&) const = default;

  /// "barrier", or the collective kind's name ("all_gather", ...).
  [[nodiscard]] std::string_view operation() const noexcept;

  /// "#7 all_gather count=1000 f32", with the op or root where the kind has one, and " at
  /// train.cpp:42" where the site is known.
  [[nodiscard]] std::string describe() const;
};

/// Empty if every rank's record (in rank order) is the same; else each distinct call with the
/// ranks that made it, the same text on every rank: "rank 0 #7 all_gather count=1000 f32 vs
/// ranks 1,2 #7 reduce_scatter count=1024 f32 sum".
std::string describe_disagreement(std::span<const CallRecord> records);

/// Throws Error(invalid_argument) with `context` if the ranks' records (in rank order) disagree,
/// listing each rank's call (the same message on every rank that has the same records).
void throw_if_disagreeing(std::span<const CallRecord> records, const ErrorContext& context);

/// The error of a collective's receive whose peer sent a message for the same collective number
/// under another shape (CollectiveTags::same_call_other_shape): size_mismatch naming both sizes
/// and both ranks where the sizes differ, else invalid_argument.
Error disagreeing_call_error(const ErrorContext& context, std::size_t expected_bytes, int tag, std::size_t sent_bytes,
                             int sent_tag);

/// The count every rank of a correct call passes alike: the per-rank block of all_gather and
/// reduce_scatter, the whole buffer of all_reduce, all_to_all and broadcast, 0 for all_to_allv
/// (whose counts differ by rank).
std::size_t agreed_count(const CollectiveArgs& args) noexcept;

/// Whether the call is in place where every rank of a correct call agrees on it: an all-reduce's
/// (as MPI_IN_PLACE must be given at every rank; the selection table chooses by it). False for
/// every other kind, whose ranks may differ.
constexpr bool agreed_in_place(const CollectiveArgs& args) noexcept {
  return args.kind == CollectiveKind::all_reduce && args.in_place;
}

/// Whether `kind` has a reduction op.
constexpr bool reduces(CollectiveKind kind) noexcept {
  return kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_reduce;
}

}  // namespace meshcomm::detail
