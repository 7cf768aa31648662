#pragma once

// How a receiver moves a large one-way message from a peer on its host
// (ucx_single_copy_protocol.hpp): by reading the sender's buffer in one kernel copy, or by asking
// for the bytes, which UCX moves through its shared-memory queues in two copies on both cores.
// Which is faster depends on the traffic, not on the size alone. On the 2-core VM of
// perftests/README.md the two copies were up to 2.6x faster than the one copy in a ping-pong that
// sends the same cache-resident buffer again and again, and 2-6x slower in an in-place broadcast,
// in phases that come and go. So the receiver measures both and takes the faster, per size class.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace meshcomm::detail {

/// The two ways a one-way message can move.
enum class OneWayTransfer : std::uint8_t {
  read_in_one_copy,  ///< the receiver reads the sender's buffer (process_vm_readv)
  ask_for_payload,   ///< the sender sends the bytes as a tagged message, through UCX's queues
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

/// Chooses, per size class (the power of two at or below the message size), the way that moved
/// the recent messages of that class faster, counting the time from the sender's announcement to
/// the bytes being in the receiver's buffer. Each way first moves two messages (the first also
/// pays for setting the way up). Then the slower way is tried again now and then, so that a change
/// of traffic is seen: soon after the choice changed, then ever more rarely, and the worse it
/// measured the rarer: in the long run these trials cost about 2% of the time where one way is
/// up to 20 times slower than the other (they come at least once every 1024 messages).
/// The faster way's figure is the mean of its last message and its figure before, so one slow
/// message does not turn the choice alone, while a way that stays slower than the other's figure
/// loses within a few messages. Safe to call from any thread.
class OneWayTransferChoice {
 public:
  explicit OneWayTransferChoice(OneWayPolicy policy = OneWayPolicy::measure) noexcept : policy_(policy) {}

  /// The way to move the next one-way message of `bytes`.
  [[nodiscard]] OneWayTransfer choose(std::size_t bytes);

  /// Records that a message of `bytes` moved `transfer`'s way in `took`.
  void record(std::size_t bytes, OneWayTransfer transfer, std::chrono::nanoseconds took);

  /// Most messages of a size class between two trials of the slower way.
  static constexpr std::uint32_t kLongestTrialInterval = 1024;

 private:
  struct Estimate {
    double nanoseconds_per_byte = 0;  ///< 0: not measured yet
    std::uint32_t samples = 0;        ///< messages this way has moved
    std::uint32_t choices_since = 0;  ///< messages of the class since this way last moved one
  };
  struct SizeClass {
    std::array<Estimate, 2> ways{};
    OneWayTransfer faster = OneWayTransfer::read_in_one_copy;
    std::uint32_t trials_confirming = 0;  ///< trials of the slower way since `faster` last changed
  };

  /// Messages of the class between trials of the slower way: fewer the closer the two figures
  /// are, and fewer soon after the faster way changed (then doubling with each trial that
  /// confirms it), so that a figure left from the first, slow messages is soon corrected.
  static std::uint32_t trial_interval(const SizeClass& size) noexcept;

  OneWayPolicy policy_;
  std::mutex mutex_;
  std::array<SizeClass, 64> classes_{};
};

}  // namespace meshcomm::detail
