#include "one_way_transfer_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "environment.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

namespace {

/// The share of the time that trials of the slower way may cost: a trial costs the ratio of the
/// two figures less one, so it comes every (ratio - 1) / share messages.
constexpr double kTrialShare = 0.02;
constexpr std::uint32_t kShortestTrialInterval = 4;
/// Messages each way moves before its figure counts: the first also pays for setting the way up.
constexpr std::uint32_t kWarmUpMessages = 2;

std::size_t size_class(std::size_t bytes) noexcept {
  return bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes) - 1);
}

std::size_t index_of(OneWayTransfer transfer) noexcept { return static_cast<std::size_t>(transfer); }

OneWayTransfer other(OneWayTransfer transfer) noexcept {
  return transfer == OneWayTransfer::read_in_one_copy ? OneWayTransfer::ask_for_payload
                                                      : OneWayTransfer::read_in_one_copy;
}

}  // namespace

std::string_view to_string(OneWayTransfer transfer) noexcept {
  return transfer == OneWayTransfer::read_in_one_copy ? "read" : "ask";
}

std::string_view to_string(OneWayPolicy policy) noexcept {
  switch (policy) {
    case OneWayPolicy::read: return "read";
    case OneWayPolicy::ask: return "ask";
    case OneWayPolicy::measure: break;
  }
  return "measure";
}

OneWayPolicy one_way_policy_from_environment() {
  const auto setting = environment_variable("MESHCOMM_UCX_ONE_WAY");
  if (!setting || setting->empty()) return OneWayPolicy::measure;
  for (const auto policy : {OneWayPolicy::measure, OneWayPolicy::read, OneWayPolicy::ask}) {
    if (*setting == to_string(policy)) return policy;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_UCX_ONE_WAY = '{}' is not a way to move one-way messages; valid: measure (the "
                          "default: the faster of the two, measured), read (the receiver reads the sender's buffer "
                          "in one copy) or ask (the sender sends the bytes through UCX)",
                          *setting),
              {.backend = "ucx", .operation = "create"});
}

OneWayTransfer OneWayTransferChoice::choose(std::size_t bytes) {
  if (policy_ == OneWayPolicy::read) return OneWayTransfer::read_in_one_copy;
  if (policy_ == OneWayPolicy::ask) return OneWayTransfer::ask_for_payload;
  std::lock_guard lock(mutex_);
  auto& size = classes_[size_class(bytes)];
  auto& read = size.ways[index_of(OneWayTransfer::read_in_one_copy)];
  auto& ask = size.ways[index_of(OneWayTransfer::ask_for_payload)];
  OneWayTransfer chosen;
  if (read.samples < kWarmUpMessages) {
    chosen = OneWayTransfer::read_in_one_copy;
  } else if (ask.samples < kWarmUpMessages) {
    chosen = OneWayTransfer::ask_for_payload;
  } else {
    const auto faster = read.nanoseconds_per_byte <= ask.nanoseconds_per_byte ? OneWayTransfer::read_in_one_copy
                                                                               : OneWayTransfer::ask_for_payload;
    if (faster != size.faster) {
      size.faster = faster;
      size.trials_confirming = 0;
    }
    const auto& slower = size.ways[index_of(other(faster))];
    chosen = slower.choices_since + 1 >= trial_interval(size) ? other(faster) : faster;
    if (chosen != faster) ++size.trials_confirming;
  }
  ++size.ways[index_of(other(chosen))].choices_since;
  return chosen;
}

std::uint32_t OneWayTransferChoice::trial_interval(const SizeClass& size) noexcept {
  const double faster = size.ways[index_of(size.faster)].nanoseconds_per_byte;
  const double slower = size.ways[index_of(other(size.faster))].nanoseconds_per_byte;
  const double affordable = std::ceil((slower / faster - 1) / kTrialShare);
  const double backed_off = double{kShortestTrialInterval} * std::exp2(std::min(size.trials_confirming, 16u));
  return static_cast<std::uint32_t>(
      std::clamp(std::min(affordable, backed_off), double{kShortestTrialInterval}, double{kLongestTrialInterval}));
}

void OneWayTransferChoice::record(std::size_t bytes, OneWayTransfer transfer, std::chrono::nanoseconds took) {
  if (policy_ != OneWayPolicy::measure || bytes == 0) return;
  const double sample = std::max(1.0, static_cast<double>(took.count())) / static_cast<double>(bytes);
  std::lock_guard lock(mutex_);
  auto& estimate = classes_[size_class(bytes)].ways[index_of(transfer)];
  // A way's first messages also pay for setting it up (UCX's queues, page faults), and a trial's
  // figure replaces one that may be from traffic of another kind.
  const bool fresh = estimate.samples < kWarmUpMessages || estimate.choices_since > 0;
  estimate.nanoseconds_per_byte = fresh ? sample : (estimate.nanoseconds_per_byte + sample) / 2;
  ++estimate.samples;
  estimate.choices_since = 0;
}

}  // namespace meshcomm::detail
