#pragma once

// A choice between two ways of doing the same work whose speeds depend on the machine's state,
// not on the size alone (how a large one-way message moves between two processes; whether a
// large reduction stores its sums through the cache or around it): the ways are measured as they
// run and the faster is taken, per size class.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace meshcomm::detail {

/// Chooses, per size class (the power of two at or below the size), the way (0 or 1) that did
/// the recent work of that class faster, by its time per byte. Each way first does two pieces
/// of work (the first also pays for setting the way up; Settings::trial_run, if more), way 0
/// first. Then the slower way is tried again now and then, so that a change of speeds is seen:
/// soon after the choice changed (those trials cost up to 5% of the time), then ever more rarely,
/// and the worse it measured the rarer: in the long run these trials cost about 2% of the time
/// where one way is up to 20 times slower than the other (they come at least once every
/// kLongestTrialInterval pieces). The faster way's figure moves toward each of its pieces by a
/// set weight (half by default: its figure is then the mean of its last piece and its figure
/// before), so one slow piece does not turn the choice alone, while a way that stays slower than
/// the other's figure loses within a few pieces. Safe to call from any thread.
class MeasuredChoice {
 public:
  /// Most pieces of work of a size class between two trials of the slower way.
  static constexpr std::uint32_t kLongestTrialInterval = 1024;

  /// How the choice weighs new pieces and what its trials cost.
  struct Settings {
    /// In (0, 1]: how far the faster way's figure moves toward each new piece. Lower where single
    /// slow pieces are common and the speeds themselves change seldom.
    double latest_piece_weight = 0.5;
    /// Pieces of the slower way a trial takes, where a choice cannot be applied to one piece alone
    /// (it takes effect some pieces later, and lasts as long); each piece of a trial run past its
    /// first (trial_run) lengthens it by one.
    std::uint32_t pieces_per_trial = 1;
    /// Pieces' worth of time a trial loses besides its slower pieces: where the pieces right
    /// after a change of way run slower than either way's own (they find what the other way left).
    double pieces_lost_switching = 0;
    /// In [0, 1): how much lower the other way's figure must be than the faster way's for the
    /// choice to turn to it. Above 0 where two ways often measure about level and each change
    /// costs pieces (pieces_lost_switching): noise between level figures then turns nothing.
    double switch_margin = 0;
    /// 0, or above 1: a piece of a way that has its figure counts as at most this many times the
    /// figure, so that one piece slowed by something else (a context switch) cannot turn the
    /// choice alone however slow it was, while a lasting change still moves the figure all the way.
    double largest_piece_over_figure = 0;
    /// Pieces way 0 does before way 1 is first tried: where a trial costs, so that short runs in
    /// which way 0 serves well enough do not pay for learning about way 1.
    std::uint32_t way0_pieces_first = 0;
    /// At least 1: pieces each trial of the slower way, and each way's first work, takes in a row,
    /// every one of them replacing that way's figure, so that the last one's stands. Above 1 where
    /// a way's first piece after the other way's runs slower than its next ones (it finds the
    /// caches, queues or transport as the other way left them): a trial of one such piece would
    /// never see the slower way become the faster.
    std::uint32_t trial_run = 1;
  };

  /// Trials of one piece, losing nothing else; the faster way's figure moves toward each piece
  /// by `latest_piece_weight` (see Settings).
  explicit MeasuredChoice(double latest_piece_weight = 0.5) noexcept
      : MeasuredChoice(Settings{.latest_piece_weight = latest_piece_weight}) {}
  /// Trials as `settings` says: they come as much more rarely as they cost more, so that they
  /// keep their share of the time.
  explicit MeasuredChoice(Settings settings) noexcept : settings_(settings) {}

  /// The way (0 or 1) to do the next piece of work of `bytes`.
  [[nodiscard]] int choose(std::size_t bytes);

  /// The way the next piece of `bytes` takes outside trials: the faster by the figures (way 0
  /// while the ways are first measured). A caller that can try a way on part of a piece alone
  /// tells a trial by a choose() that differs from it.
  [[nodiscard]] int usual_way(std::size_t bytes);

  /// Records that a piece of work of `bytes` took `took` way `way`'s.
  void record(std::size_t bytes, int way, std::chrono::nanoseconds took);

 private:
  struct Estimate {
    double nanoseconds_per_byte = 0;  ///< 0: not measured yet
    std::uint32_t samples = 0;        ///< pieces this way has done
    std::uint32_t choices_since = 0;  ///< pieces of the class since this way last did one
  };
  struct SizeClass {
    std::array<Estimate, 2> ways{};
    int faster = 0;
    std::uint32_t trials_confirming = 0;  ///< trials of the slower way since `faster` last changed
    std::uint32_t trial_pieces_to_choose = 0;  ///< pieces of the running trial not yet chosen
    std::uint32_t trial_pieces_to_record = 0;  ///< pieces of the running trial not yet recorded
  };

  /// The way that is faster now, by the figures and the switch margin.
  [[nodiscard]] int faster_way(const SizeClass& size) const noexcept;
  /// Pieces of the class between trials of the slower way: enough for the trials to keep their
  /// share of the time, so fewer the closer the two figures are and the less a trial costs
  /// (Settings), and fewer soon after the faster way changed (from four trials' lengths, or as
  /// many pieces as keep trials to 5% of the time if more, then doubling with each trial that
  /// confirms it), so that a figure left from the first, slow pieces is soon corrected, where
  /// rechecking a way that measured far slower does not cost a short run much of its time.
  [[nodiscard]] std::uint32_t trial_interval(const SizeClass& size) const noexcept;

  Settings settings_;
  std::mutex mutex_;
  std::array<SizeClass, 64> classes_{};
};

}  // namespace meshcomm::detail
