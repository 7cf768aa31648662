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

/// `value` reduced by `op` over the ranks of `comm` (e.g. the slowest rank's time).
double reduce_over_ranks(Communicator& comm, double value, ReduceOp op);

/// Runs each of `bodies` in turn, `plan.repeats` times over, so that drift on a noisy machine
/// hits them alike; returns for each the median over repeats of its time per call in seconds,
/// the maximum over the ranks of `comm` (every rank must pass the same bodies).
std::vector<double> time_side_by_side(Communicator& comm, const TimingPlan& plan,
                                      const std::vector<std::function<void()>>& bodies);

}  // namespace meshcomm::perf
