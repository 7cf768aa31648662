#pragma once

// How a receiver moves a large one-way message from a peer on its host
// (ucx_single_copy_protocol.hpp): by reading the sender's buffer in one kernel copy, or by asking
// for the bytes, which UCX moves through its shared-memory queues in two copies on both cores.
// Which is faster depends on the traffic, not on the size alone. On the 2-core VM of
// perftests/HISTORY.md the two copies were up to 2.6x faster than the one copy in a ping-pong that
// sends the same cache-resident buffer again and again, and 2-6x slower in an in-place broadcast,
// in phases that come and go. So the receiver measures both and takes the faster, per size class.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "measured_choice.hpp"

namespace meshcomm::detail {

/// The two ways a one-way message can move, numbered as MeasuredChoice's ways.
enum class OneWayTransfer : std::uint8_t {
  read_in_one_copy = 0,  ///< the receiver reads the sender's buffer (process_vm_readv)
  ask_for_payload = 1,   ///< the sender sends the bytes as a tagged message, through UCX's queues
};

/// "read" or "ask".
std::string_view to_string(OneWayTransfer transfer) noexcept;

/// What MESHCOMM_UCX_ONE_WAY asks for: measure (the default) or always one way.
enum class OneWayPolicy : std::uint8_t { measure, read, ask };

/// "measure", "read" or "ask", as MESHCOMM_UCX_ONE_WAY spells them.
std::string_view to_string(OneWayPolicy policy) noexcept;

/// MESHCOMM_UCX_ONE_WAY: "measure" (or unset), "read" or "ask". Throws
/// Error(invalid_argument) naming the variable, its value and the valid ones.
OneWayPolicy one_way_policy_from_environment();

/// Chooses, per size class, the way that moved the recent messages of that class faster,
/// counting the time from the sender's announcement to the bytes being in the receiver's buffer
/// (MeasuredChoice, way 0 reading in one copy: each way first moves two messages, then the slower
/// is tried now and then, at about 2% of the time). Safe to call from any thread.
class OneWayTransferChoice {
 public:
  explicit OneWayTransferChoice(OneWayPolicy policy = OneWayPolicy::measure) noexcept : policy_(policy) {}

  /// The way to move the next one-way message of `bytes`.
  [[nodiscard]] OneWayTransfer choose(std::size_t bytes);

  /// Records that a message of `bytes` moved `transfer`'s way in `took`.
  void record(std::size_t bytes, OneWayTransfer transfer, std::chrono::nanoseconds took);

  /// Most messages of a size class between two trials of the slower way.
  static constexpr std::uint32_t kLongestTrialInterval = MeasuredChoice::kLongestTrialInterval;

 private:
  OneWayPolicy policy_;
  MeasuredChoice measured_;
};

}  // namespace meshcomm::detail
