#pragma once

#include <functional>
#include <vector>

#include "meshcomm/communicator.hpp"

namespace meshcomm::perf {

/// How long to measure.
struct TimingPlan {
  int iterations = 10;  ///< calls per timed run
  int warmup = 2;       ///< untimed calls first
  int repeats = 3;      ///< timed runs; the median is kept
};

/// How a timed run is measured: the seconds `run` takes, once.
using Timer = std::function<double(const std::function<void()>& run)>;

/// Wall-clock seconds on the host.
double host_seconds(const std::function<void()>& run);

/// `value` reduced by `op` over the ranks of `comm` (e.g. the slowest rank's time).
double reduce_over_ranks(Communicator& comm, double value, ReduceOp op);

/// Runs each of `bodies` in turn, `plan.repeats` times over, so that drift on a noisy machine
/// hits them alike, each turn in another order (turn_order); returns for each the median over
/// repeats of its time per call in seconds, the maximum over the ranks of `comm` (every rank must
/// pass the same bodies). `timer` measures each run of `plan.iterations` calls (CUDA events on a
/// stream, for device work).
std::vector<double> time_side_by_side(Communicator& comm, const TimingPlan& plan,
                                      const std::vector<std::function<void()>>& bodies,
                                      const Timer& timer = host_seconds);

}  // namespace meshcomm::perf
