#pragma once

#include <string>
#include <vector>

#include "machine_model.hpp"

namespace meshcomm::advisor {

/// One measurement against its prediction.
struct ValidationRow {
  std::string what;      ///< the case: mesh and exchange, or op, ranks and size
  std::string scenario;  ///< cases that answer one question (ranks, model, attention): one of them is best
  double measured = 0;
  double predicted = 0;

  [[nodiscard]] double error_pct() const { return measured > 0 ? 100.0 * (predicted - measured) / measured : 0; }
};

/// What the validation compared, and what it skipped with why.
struct Validation {
  std::vector<ValidationRow> steps;        ///< layer_perf: seconds per step
  std::vector<ValidationRow> collectives;  ///< perftests: µs per call at or above the size floor
  std::vector<std::string> skipped;
};

/// Predicts every layer_perf record (mesh, exchange, FSDP axes and model in the record; ranks on
/// one node; a case run several times at the median of its runs) and every perftest record of the library's own
/// selection of at least `min_bytes` in `paths` with `machine`, beside what was measured. Throws
/// Error(invalid_argument) naming a file that cannot be read.
Validation validate(const std::vector<std::string>& paths, const MachineModel& machine, double min_bytes);

/// For each scenario of `rows`: how much slower, measured, the predicted best is than the
/// measured best, in % (0 when the prediction picked the best).
struct ScenarioPick {
  std::string scenario;
  std::string predicted_best, measured_best;
  double loss_pct = 0;
};
std::vector<ScenarioPick> best_picks(const std::vector<ValidationRow>& rows);

/// The median and the largest absolute error of `rows`, in %.
struct ErrorSummary {
  double median_pct = 0;
  double worst_pct = 0;
};
ErrorSummary summarize_errors(const std::vector<ValidationRow>& rows);

}  // namespace meshcomm::advisor
