#pragma once

#include <cstddef>
#include <cstdint>

#include "meshcomm/collective_options.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// The internal tags of collective calls, so that call k of a communicator matches only call k
/// of the same shape on every rank. Where the backend's tags have 30 bits, tags below 2^29 are
/// handed out in order (setup, barriers, halo plans, ring pipelines), and those from 2^29 on
/// belong to collective calls, each a window of 32 slots (and one tag is reserved, below):
///
///     [1][fingerprint: 14 bits][collective number mod 1024: 10 bits][slot: 5 bits]
///
/// A rank that skips a collective, calls another one, or calls it with another count, dtype,
/// reduction op or root than its peers sends and expects messages on other tags: they never
/// match (a receive is never written by another call's message, whatever its size), and the
/// ranks time out naming the peer instead of returning wrong data. Two different shapes share a
/// fingerprint with probability 2^-14.
struct CollectiveTags {
  static constexpr int kSlotBits = 5;
  static constexpr int kCallBits = 10;
  static constexpr int kFingerprintBits = 14;
  /// Tags one call can take.
  static constexpr int kSlots = 1 << kSlotBits;
  /// The first collective tag; ordered tags stay below it.
  static constexpr int kFirst = 1 << (kSlotBits + kCallBits + kFingerprintBits);
  /// The largest tag the layout uses: backends with fewer tags keep ordered tags only.
  static constexpr int kLargest = 2 * kFirst - 1;

  /// The one internal tag that ordered tags never take, for the backend's own reports (what a
  /// rank was waiting in when a native collective timed out): just below the collective tags,
  /// or a backend's largest tag where its tags are too few for them.
  static constexpr int reserved(int max_tag) noexcept { return max_tag >= kLargest ? kFirst - 1 : max_tag; }

  /// Whether `tag` lies in a collective window (on a backend whose tags hold the layout).
  static constexpr bool is_collective(int tag) noexcept { return tag >= kFirst && tag <= kLargest; }
  /// Whether two collective tags belong to the same collective number (mod 1024) but to calls of
  /// different shapes: ranks that disagree about that call.
  static constexpr bool same_call_other_shape(int tag, int other) noexcept {
    constexpr int call_mask = ((1 << kCallBits) - 1) << kSlotBits;
    constexpr int fingerprint_mask = ((1 << kFingerprintBits) - 1) << (kSlotBits + kCallBits);
    return is_collective(tag) && is_collective(other) && (tag & call_mask) == (other & call_mask) &&
           (tag & fingerprint_mask) != (other & fingerprint_mask);
  }

  /// The first tag of collective number `call` with `fingerprint`.
  static constexpr int window(std::uint64_t fingerprint, std::uint64_t call) noexcept {
    const auto fingerprint_bits = static_cast<int>(fingerprint & ((1U << kFingerprintBits) - 1));
    const auto call_bits = static_cast<int>(call & ((1U << kCallBits) - 1));
    return kFirst | (fingerprint_bits << (kSlotBits + kCallBits)) | (call_bits << kSlotBits);
  }
};

/// What every rank of a correct collective call agrees on, mixed into 64 bits: the kind, the
/// dtype, the count that is equal on every rank (0 where none is), the reduction op or root
/// where the kind has one (pass sum and 0 otherwise), and whether an all-reduce is in place.
constexpr std::uint64_t collective_fingerprint(CollectiveKind kind, DataType type, std::size_t agreed_count,
                                               ReduceOp op, int root, bool in_place = false) noexcept {
  // splitmix64's finaliser over the fields, one after another.
  auto mix = [](std::uint64_t value) {
    value ^= value >> 30;
    value *= 0xbf58476d1ce4e5b9ULL;
    value ^= value >> 27;
    value *= 0x94d049bb133111ebULL;
    return value ^ (value >> 31);
  };
  std::uint64_t hash = mix(static_cast<std::uint64_t>(kind) + 1);
  hash = mix(hash ^ (static_cast<std::uint64_t>(type) + 0x100));
  hash = mix(hash ^ static_cast<std::uint64_t>(agreed_count));
  hash = mix(hash ^ (static_cast<std::uint64_t>(op) + 0x200));
  hash = mix(hash ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(root)));
  return in_place ? mix(hash ^ 0x300) : hash;
}

/// The fingerprint of a barrier, apart from every collective's.
constexpr std::uint64_t barrier_fingerprint() noexcept {
  return collective_fingerprint(static_cast<CollectiveKind>(0xff), DataType::u8, 0, ReduceOp::sum, -1);
}

}  // namespace meshcomm::detail
