#include "measured_choice.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace meshcomm::detail {

namespace {

/// The share of the time that trials of the slower way may cost: a trial costs the ratio of the
/// two figures less one, so it comes every (ratio - 1) / share pieces.
constexpr double kTrialShare = 0.02;
/// The share they may cost soon after the faster way changed, where trials come ever more rarely
/// from a first interval: a recheck of a figure left from the first pieces, worth more where the
/// figures are close (a small error turns the choice) than where one way measured far slower.
constexpr double kEarlyTrialShare = 0.05;
constexpr std::uint32_t kShortestTrialInterval = 4;
/// Pieces each way does before its figure counts: the first also pays for setting the way up.
constexpr std::uint32_t kWarmUpPieces = 2;

std::size_t size_class(std::size_t bytes) noexcept {
  return bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes) - 1);
}

std::size_t index_of(int way) noexcept { return static_cast<std::size_t>(way); }

}  // namespace

int MeasuredChoice::choose(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  auto& size = classes_[size_class(bytes)];
  const std::uint32_t warm_up = std::max(kWarmUpPieces, settings_.trial_run);
  int chosen = 0;
  if (size.ways[0].samples < std::max(warm_up, settings_.way0_pieces_first)) {
    chosen = 0;
  } else if (size.ways[1].samples < warm_up) {
    chosen = 1;
  } else if (size.trial_pieces_to_choose > 0) {
    --size.trial_pieces_to_choose;
    chosen = 1 - size.faster;
  } else {
    const int faster = faster_way(size);
    if (faster != size.faster) {
      size.faster = faster;
      size.trials_confirming = 0;
    }
    const auto& slower = size.ways[index_of(1 - faster)];
    chosen = slower.choices_since + 1 >= trial_interval(size) ? 1 - faster : faster;
    if (chosen != faster) {
      ++size.trials_confirming;
      size.trial_pieces_to_choose = settings_.trial_run - 1;
      size.trial_pieces_to_record = settings_.trial_run;
    }
  }
  ++size.ways[index_of(1 - chosen)].choices_since;
  return chosen;
}

int MeasuredChoice::usual_way(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  return classes_[size_class(bytes)].faster;
}

int MeasuredChoice::faster_way(const SizeClass& size) const noexcept {
  const double current = size.ways[index_of(size.faster)].nanoseconds_per_byte;
  const double other = size.ways[index_of(1 - size.faster)].nanoseconds_per_byte;
  if (settings_.switch_margin > 0) {
    return other < current * (1 - settings_.switch_margin) ? 1 - size.faster : size.faster;
  }
  return size.ways[0].nanoseconds_per_byte <= size.ways[1].nanoseconds_per_byte ? 0 : 1;
}

std::uint32_t MeasuredChoice::trial_interval(const SizeClass& size) const noexcept {
  const double faster = size.ways[index_of(size.faster)].nanoseconds_per_byte;
  const double slower = size.ways[index_of(1 - size.faster)].nanoseconds_per_byte;
  const double pieces_per_trial = static_cast<double>(settings_.pieces_per_trial + settings_.trial_run - 1);
  const double trial_cost = (slower / faster - 1) * pieces_per_trial + settings_.pieces_lost_switching;
  const double affordable = std::ceil(trial_cost / kTrialShare);
  const double first_interval =
      std::max(double{kShortestTrialInterval} * pieces_per_trial, std::ceil(trial_cost / kEarlyTrialShare));
  const double backed_off = first_interval * std::exp2(std::min(size.trials_confirming, 16u));
  return static_cast<std::uint32_t>(
      std::clamp(std::min(affordable, backed_off), double{kShortestTrialInterval}, double{kLongestTrialInterval}));
}

void MeasuredChoice::record(std::size_t bytes, int way, std::chrono::nanoseconds took) {
  if (bytes == 0) return;
  double sample = std::max(1.0, static_cast<double>(took.count())) / static_cast<double>(bytes);
  std::lock_guard lock(mutex_);
  auto& size = classes_[size_class(bytes)];
  auto& estimate = size.ways[index_of(way)];
  // A way's first pieces also pay for setting it up (queues, page faults), and a trial of the
  // slower way replaces a figure that may be from work of another kind. The faster way's figure
  // only moves toward its pieces, whether a trial came between them or not.
  const bool in_trial_run = way != size.faster && size.trial_pieces_to_record > 0;
  if (in_trial_run) --size.trial_pieces_to_record;
  const bool trial = in_trial_run || (way != size.faster && estimate.choices_since > 0);
  const bool fresh = estimate.samples < std::max(kWarmUpPieces, settings_.trial_run) || trial;
  if (!fresh && settings_.largest_piece_over_figure > 0) {
    sample = std::min(sample, settings_.largest_piece_over_figure * estimate.nanoseconds_per_byte);
  }
  estimate.nanoseconds_per_byte =
      fresh ? sample
            : estimate.nanoseconds_per_byte + settings_.latest_piece_weight * (sample - estimate.nanoseconds_per_byte);
  ++estimate.samples;
  estimate.choices_since = 0;
}

}  // namespace meshcomm::detail
