#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compute_model.hpp"
#include "machine_model.hpp"

namespace meshcomm::advisor {

/// One measured size of a collective: bytes (whole buffer) and time in µs.
struct CollectivePoint {
  double bytes = 0;
  double time_us = 0;
};

/// Fits `points` with one alpha-beta line per interval between the measured sizes (repeated sizes
/// at their median time), so that algorithm switches and cache regimes inside the range are kept;
/// beyond the largest size the last line continues, below the smallest the smallest time holds.
CollectiveFit fit_collective(CollectiveOp op, std::string algorithm, int ranks, std::vector<CollectivePoint> points);

/// One measured piece of compute (a training step on one rank): its work and its seconds.
struct ComputePoint {
  ComputeWork work;
  double seconds = 0;
};

/// Fits the six compute speeds to `points` by non-negative least squares on the relative error;
/// a term the data cannot tell from the others costs nothing, and all stay at `fallback` without points. Sets `median_error_pct` to the fit's
/// median relative error.
ComputeSpeed fit_compute(const std::vector<ComputePoint>& points, const ComputeSpeed& fallback,
                         double& median_error_pct);

/// What `calibrate` read and fitted.
struct CalibrationSummary {
  int collective_records = 0;  ///< perftest records used
  int layer_records = 0;       ///< layer_perf records used (one rank)
  double compute_median_error_pct = 0;
  std::vector<std::string> notes;
};

/// Reads the perftests' `--json` files (collective records: op, algo, ranks, bytes, time_us;
/// Open MPI's own rows and wrong results are skipped) and layer_perf's (one-rank records' whole
/// steps give the compute speeds; fsdp-only records on several ranks of one node, how much slower
/// ranks compute beside each other; sp-only records, what each exchange call costs beyond its
/// messages), and returns `base` with the fits, the node link derived from them, and
/// `cores_per_node`. Throws Error(invalid_argument) naming a file that cannot be read or holds
/// neither kind of record.
MachineModel calibrate(const std::vector<std::string>& paths, const MachineModel& base, int cores_per_node,
                       CalibrationSummary& summary);

}  // namespace meshcomm::advisor
