#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshcomm::advisor {

/// The collectives a training step makes (the perftests' operation names).
enum class CollectiveOp : std::uint8_t { all_gather, reduce_scatter, all_reduce, alltoall, sendrecv };

/// "all_gather", "reduce_scatter", "all_reduce", "alltoall", "sendrecv".
std::string_view to_string(CollectiveOp op) noexcept;
/// The op of a perftest's name, or nothing for operations the model does not use.
std::optional<CollectiveOp> parse_collective_op(std::string_view name) noexcept;

/// One class of link: a rank's bandwidth in GB/s (10⁹ bytes per second) and the latency of a message in µs.
struct LinkSpeed {
  double bandwidth_gbps = 0;
  double latency_us = 0;
};

/// Parses "BW,LAT" (GB/s, µs) for `option`; throws Error(invalid_argument) naming it.
LinkSpeed parse_link_speed(std::string_view option, std::string_view text);

/// time = alpha + beta · bytes, for messages of [min_bytes, max_bytes].
struct AlphaBeta {
  double min_bytes = 0;
  double max_bytes = 0;
  double alpha_us = 0;
  double beta_us_per_byte = 0;

  [[nodiscard]] double time_us(double bytes) const { return alpha_us + beta_us_per_byte * bytes; }
};

/// A collective's measured speed on one node: alpha-beta segments by message size (the library
/// switches algorithms with the size), fitted to the perftests' records of one algorithm.
struct CollectiveFit {
  CollectiveOp op = CollectiveOp::all_gather;
  std::string algorithm = "auto";  ///< the perftest's `algo`: "auto" is the library's own selection
  int ranks = 0;
  std::vector<AlphaBeta> segments;  ///< ascending, covering the measured sizes
  int points = 0;                   ///< records fitted
  double median_error_pct = 0;      ///< the fit against those records

  /// The fitted time of `bytes` (the whole buffer, as the perftests report it); sizes beyond the
  /// largest measured extend the last segment, sizes below the smallest take its time.
  [[nodiscard]] double time_us(double bytes) const;
};

/// Compute speeds: seconds = gemm / gemm + attention / attention + pairs · pair + scans · scan +
/// activations / activation + optimizer bytes / optimizer.
struct ComputeSpeed {
  double gemm_flops_per_s = 4e14;
  double attention_flops_per_s = 2e14;
  double seconds_per_pair = 0;  ///< per visible query-key pair and head, beyond its flops (exponentials, indexing)
  double seconds_per_scan = 0;  ///< per query-key pair a dense kernel visits (0 for kernels that skip masked blocks)
  double activations_per_s = 1e12;  ///< elements through SiLU or a softmax, forward and backward
  double optimizer_bytes_per_s = 2e12;
};

/// A machine: links inside and between nodes, compute, memory per rank, and the collectives'
/// fits where a calibration measured them. Defaults describe a DGX H100: NVLink inside the node,
/// eight 400 Gb/s NICs between nodes.
struct MachineModel {
  LinkSpeed intra{.bandwidth_gbps = 300, .latency_us = 3};
  LinkSpeed inter{.bandwidth_gbps = 50, .latency_us = 8};
  ComputeSpeed compute;
  double memory_bytes = 80.0 * (1ULL << 30);
  int cores_per_node = 0;  ///< ranks beyond this share cores and compute slower (0: no limit)
  /// Measured: ranks on one node, up to its cores → how much slower each one's GEMMs and
  /// activations run than one rank's alone (shared caches and memory bandwidth). Beyond the
  /// cores: core_turns() times the factor at the cores.
  std::map<int, double> node_sharing;
  /// Measured: ranks on one node beyond its cores → seconds each layer of a step loses to ranks
  /// taking turns on the cores (a rank that waits for a collective holds a core another needs).
  std::map<int, double> oversubscribed_layer_seconds;
  /// Measured: each sp exchange's cost per call beyond its messages (packing, buffers, the
  /// plan's steps), in µs, by exchange name.
  std::map<std::string, double> exchange_call_us;
  int nics_per_node = 8;
  std::vector<CollectiveFit> fits;
  std::string source = "defaults";  ///< where the figures come from

  /// The slowdown of the GEMMs and activations of each of `ranks_per_node` ranks on a node.
  [[nodiscard]] double compute_slowdown(int ranks_per_node) const;
  /// ranks / cores, at least 1: how many ranks take turns on each core.
  [[nodiscard]] double core_turns(int ranks_per_node) const;
  /// The fit of `op` at `ranks` by the library's own selection, if measured.
  [[nodiscard]] const CollectiveFit* fit_for(CollectiveOp op, int ranks) const;
};

/// Reads a calibration written by `meshcomm-advise calibrate` over the defaults; throws
/// Error(invalid_argument) naming the file and what is missing or malformed.
MachineModel load_calibration(const std::string& path);
/// Writes `machine` as calibration JSON.
void save_calibration(const MachineModel& machine, const std::string& path);

}  // namespace meshcomm::advisor
