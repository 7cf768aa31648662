#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "mpi_datatypes.hpp"
#include "new_input.hpp"
#include "perf_buffer.hpp"
#include "perf_operation.hpp"
#include "perf_options.hpp"
#include "shared_line.hpp"
#include "statistics.hpp"
#include "turn_order.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::perf {

namespace {

/// One measured placement of one size.
struct Measurement {
  double time_us = -1;  // -1: not run (the variant's algorithm cannot run this call)
  double algbw = 0;
  double busbw = 0;
  std::uint64_t wrong = 0;
  double speedup = 0;  // over the baseline, the median of the per-repeat ratios; 0 when none was measured
};

/// The reduction of a per-rank number over all ranks, as -a asks.
double across_ranks(Communicator& comm, double value, TimeAcross how) {
  double result = value;
  const ReduceOp op = how == TimeAcross::min ? ReduceOp::min : how == TimeAcross::max ? ReduceOp::max : ReduceOp::sum;
  comm.all_reduce(ConstBufferView(&value, 1, DataType::f64), BufferView(&result, 1, DataType::f64), {.op = op}).wait();
  if (how == TimeAcross::mean) result /= comm.size();
  if (how == TimeAcross::rank0) {
    result = value;
    comm.broadcast(BufferView(&result, 1, DataType::f64), {.root = 0}).wait();
  }
  return result;
}

std::uint64_t sum_over_ranks(Communicator& comm, std::uint64_t value) {
  std::uint64_t total = 0;
  comm.all_reduce(ConstBufferView(&value, 1, DataType::u64), BufferView(&total, 1, DataType::u64)).wait();
  return total;
}

/// One perftest run: every size, every variant (algorithm, buffers, backend, or Open MPI's own
/// call) measured side by side. With several communicators (--backend mpi,ucx) every variant
/// runs on each; the first one also carries the run's own barriers and reductions.
class Sweep {
 public:
  /// `line`, where given, is bounced between the cores of the node's ranks 0 and 1 before and
  /// after the sizes (shared_line.hpp); its round trip goes into the header and the summary.
  Sweep(const PerfOperation& operation, const PerfOptions& options, std::vector<Communicator*> communicators,
        SharedLine* line = nullptr)
      : operation_(operation),
        options_(options),
        line_(line),
        comm_(*communicators.front()),
        communicators_(std::move(communicators)),
        element_(size_of(options.type)),
        turn_seed_(shared_turn_seed(comm_)) {
    settings_ = {.type = options.type, .op = options.op, .root = options.root, .algorithm = "", .memory = options.memory};
    if (options.memory == MemoryKind::cuda) {
      stream_ = verifiable::new_stream();
      settings_.stream = StreamRef(stream_.get());
    }
    baseline_ = options.baseline;
    if (baseline_ == Baseline::mpi_best) {
      mpi_best_missing_ = mpi_best_unavailable();
      if (mpi_best_missing_.empty()) {
        MPI_Comm_dup(MPI_COMM_WORLD, &mpi_comm_);
      } else {
        baseline_ = Baseline::native;
      }
    }
    const bool mpi_best = baseline_ == Baseline::mpi_best;
    const auto largest = operation.counts(options.max_bytes / element_, comm_.size(), comm_.rank());
    buffers_.resize(communicators_.size());
    for (std::size_t c = 0; c < communicators_.size(); ++c) {
      for (bool user : {false, true}) {
        const bool measured = user ? options.user_buffers : options.shared_buffers;
        // Open MPI's calls run on the first communicator's user buffers.
        if (!measured && !(user && mpi_best && c == 0)) continue;
        auto& kind = buffers_[c][user ? 1 : 0];
        const auto& comm = *communicators_[c];
        if (user && c > 0) {
          // Every communicator times its calls on the same user buffers: on buffers of their own
          // (other pages, other offsets within the pages) two communicators running the same code
          // differed by up to 15% at 16 MiB, either way from launch to launch.
          kind = buffers_[0][1];
        } else {
          kind.send = std::make_shared<PerfBuffer>(comm, largest.send * element_, user, options.memory);
          kind.recv = std::make_shared<PerfBuffer>(comm, std::max(largest.send, largest.recv) * element_, user,
                                                   options.memory);
        }
        if (!measured) continue;
        // Every (algorithm, buffers, backend) triple is one column of the comparison.
        for (const auto& algorithm : options.algorithms) {
          variants_.push_back({.algorithm = algorithm, .user_buffers = user, .communicator = c});
        }
      }
    }
    if (mpi_best) {
      variants_.push_back({.algorithm = "mpi_blocking", .user_buffers = true, .mpi = MpiCall::blocking});
      variants_.push_back({.algorithm = "mpi_nonblocking", .user_buffers = true, .mpi = MpiCall::nonblocking});
    }
  }
  ~Sweep() {
    if (mpi_comm_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_comm_);
  }
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  /// Runs every size; returns the total number of wrong elements over all ranks.
  std::uint64_t run() {
    print_header(line_round_trip());
    std::uint64_t wrong = 0;
    double busbw_sum = 0;
    int busbw_rows = 0;
    for (std::size_t bytes = options_.min_bytes; bytes <= options_.max_bytes;) {
      const auto counts = operation_.counts(bytes / element_, comm_.size(), comm_.rank());
      // Every variant and placement is checked and warmed up first; then each timed repeat runs
      // them all in turn, so that drift on a noisy machine hits every column of a row alike, each
      // repeat in another order (turn_order) so that no column always follows the same ones.
      std::vector<Slot> slots;
      for (std::size_t v = 0; v < variants_.size(); ++v) {
        if (variants_[v].mpi && !fits_mpi_counts(counts)) continue;
        for (bool in_place : {false, true}) {
          if (in_place && !operation_.has_in_place()) continue;
          select(v);
          if (const auto found_wrong = check_and_warm_up_where_it_runs(counts, in_place)) {
            slots.push_back({.variant = v, .in_place = in_place, .wrong = *found_wrong});
          }
        }
      }
      for (int repeat = 0; repeat < options_.repeats; ++repeat) {
        for (const std::size_t turn : turn_order(turn_seed_, repeat, slots.size())) {
          auto& slot = slots[turn];
          select(slot.variant);
          slot.times_us.push_back(timed_microseconds(counts, slot.in_place));
        }
      }
      const Reference reference_out = reference(false, slots);
      const Reference reference_in = reference(true, slots);
      for (auto& slot : slots) {
        slot.speedup = paired_speedup((slot.in_place ? reference_in : reference_out).times_us, slot.times_us);
      }
      std::vector<std::pair<Measurement, Measurement>> row(variants_.size());
      for (auto& slot : slots) {
        select(slot.variant);
        const auto measurement = summarize(slot, counts);
        (slot.in_place ? row[slot.variant].second : row[slot.variant].first) = measurement;
        wrong += measurement.wrong;
        if (variants_[slot.variant].mpi) continue;
        busbw_sum += measurement.busbw;
        ++busbw_rows;
      }
      for (std::size_t v = 0; v < row.size(); ++v) {
        const bool ran = row[v].first.time_us >= 0 || row[v].second.time_us >= 0;
        if (!variants_[v].mpi && ran) print_row(counts, variant_name(v), row[v]);
      }
      if (baseline_ == Baseline::mpi_best && !reference_out.times_us.empty()) {
        std::pair<Measurement, Measurement> best{measure(reference_out.times_us, counts),
                                                 measure(reference_in.times_us, counts)};
        const auto backend = to_string(comm_.backend());
        record("mpi_best", "user", backend, false, best.first, reference_out.times_us, counts, reference_out.call);
        if (operation_.has_in_place()) {
          record("mpi_best", "user", backend, true, best.second, reference_in.times_us, counts, reference_in.call);
        }
        print_row(counts, "mpi_best", best);
      }
      const std::size_t next = options_.step_factor > 1
                                   ? static_cast<std::size_t>(static_cast<double>(bytes) * options_.step_factor)
                                   : bytes + options_.step_bytes;
      if (next <= bytes) break;
      bytes = next;
    }
    const auto round_trip_after = line_round_trip();
    if (comm_.rank() == 0) {
      if (round_trip_after) fmt::print("# {}: {:.0f} ns after the sizes\n", kLineRoundTrip, *round_trip_after);
      fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
      fmt::print("# Avg bus bandwidth    : {:.4f}\n#\n", busbw_rows > 0 ? busbw_sum / busbw_rows : 0.0);
      if (!options_.json_path.empty()) write_json();
    }
    return wrong;
  }

 private:
  [[nodiscard]] std::size_t reported_bytes(const PerfCounts& counts) const {
    return std::max(counts.send, counts.recv) * element_;
  }

  /// Why Open MPI's calls cannot be this run's reference; empty when they can.
  [[nodiscard]] std::string mpi_best_unavailable() const {
    if (options_.backend == BackendKind::inproc) return "ranks are threads of one process (--backend inproc)";
    if (options_.memory != MemoryKind::host) return "the buffers are device memory (--memory cuda)";
    if (operation_.mpi_calls().blocking.empty()) return fmt::format("Open MPI has no {} call", operation_.name());
    if (operation_.reduces() && detail::mpi_type(options_.type) == MPI_DATATYPE_NULL) {
      return fmt::format("Open MPI cannot reduce {}", to_string(options_.type));
    }
    return {};
  }

  /// Whether Open MPI's int counts hold this size's buffers.
  [[nodiscard]] bool fits_mpi_counts(const PerfCounts& counts) const {
    return reported_bytes(counts) <= static_cast<std::size_t>(std::numeric_limits<int>::max());
  }

  /// One variant and placement of one size: the per-repeat times and the wrong elements found.
  struct Slot {
    std::size_t variant = 0;
    bool in_place = false;
    std::uint64_t wrong = 0;
    std::vector<double> times_us;
    double speedup = 0;
  };

  /// Whether variant `v` is one the speedups are measured against.
  [[nodiscard]] bool is_baseline(std::size_t v) const {
    if (baseline_ == Baseline::mpi_best) return variants_[v].mpi.has_value();
    return baseline_ == Baseline::native && variants_[v].algorithm == "native";
  }

  /// A placement's baseline: the per-repeat times of the baseline slot with the lowest median
  /// (lowest_median()): Open MPI's faster call at this size (mpi_best), or the faster native on
  /// either kind of buffer. Empty times when no baseline was measured.
  struct Reference {
    std::vector<double> times_us;
    std::string call;  ///< the Open MPI call, or the variant, the times are of
  };
  [[nodiscard]] Reference reference(bool in_place, const std::vector<Slot>& slots) const {
    std::vector<const Slot*> candidates;
    for (const auto& slot : slots) {
      if (is_baseline(slot.variant) && slot.in_place == in_place) candidates.push_back(&slot);
    }
    if (candidates.empty()) return {};
    std::vector<std::vector<double>> times;
    for (const auto* slot : candidates) times.push_back(slot->times_us);
    const Slot& fastest = *candidates[lowest_median(times)];
    return {.times_us = fastest.times_us, .call = reference_name(fastest.variant)};
  }

  /// Makes variant `v` the one that the next calls measure.
  void select(std::size_t v) {
    variant_ = v;
    settings_.algorithm = variants_[v].algorithm;
    current_ = &buffers_[variants_[v].communicator][variants_[v].user_buffers ? 1 : 0];
    current_comm_ = communicators_[variants_[v].communicator];
  }

  /// Where the calls of a placement read and write, in the current variant's buffers.
  struct Placement {
    const PerfBuffer& send_buffer;
    const PerfBuffer& recv_buffer;
    std::size_t send_at;
    std::size_t recv_at;
    [[nodiscard]] std::byte* send() const { return send_buffer.data() + send_at; }
    [[nodiscard]] std::byte* recv() const { return recv_buffer.data() + recv_at; }
  };
  [[nodiscard]] Placement placement(const PerfCounts& counts, bool in_place) const {
    return {.send_buffer = in_place ? *current_->recv : *current_->send,
            .recv_buffer = *current_->recv,
            .send_at = in_place ? counts.in_place_send_offset * element_ : 0,
            .recv_at = in_place ? counts.in_place_recv_offset * element_ : 0};
  }

  /// Starts one call of the current variant and waits for it: meshcomm's, or Open MPI's own.
  void call_once(const Placement& at, const PerfCounts& counts, bool in_place) const {
    const auto& variant = variants_[variant_];
    if (!variant.mpi) {
      operation_.start(*current_comm_, at.send(), at.recv(), counts, settings_).wait();
      return;
    }
    // MPI_IN_PLACE finds the input where MPI's in-place rules put it: in the one buffer.
    operation_.call_mpi({.call = *variant.mpi,
                         .comm = mpi_comm_,
                         .send = in_place ? MPI_IN_PLACE : at.send(),
                         .recv = at.recv_buffer.data(),
                         .in_place = in_place,
                         .element = detail::mpi_type(options_.type)},
                        counts, settings_);
  }

  /// call_once(), after this rank, where it sends, has written new bytes over its input under
  /// --new-input (write_new_input).
  void call_once_on_new_input(const Placement& at, const PerfCounts& counts, bool in_place) {
    if (options_.new_input && operation_.sends(current_comm_->rank(), settings_)) {
      write_new_input(at.send(), counts.send * element_, ++new_input_calls_);
    }
    call_once(at, counts, in_place);
  }

  /// Checks one call's result against the expected data (outside any timing), then runs the
  /// warm-up calls; returns the wrong elements over all ranks. Open MPI's calls are filled with
  /// the same data but not checked: their in-place layouts differ from meshcomm's.
  std::uint64_t check_and_warm_up(const PerfCounts& counts, bool in_place) {
    const auto at = placement(counts, in_place);
    std::uint64_t local_wrong = 0;
    if (options_.check) {
      operation_.fill(at.send_buffer.host() + at.send_at, at.recv_buffer.host() + at.recv_at, counts, settings_,
                      *current_comm_);
      at.send_buffer.upload();
      if (!in_place) at.recv_buffer.upload();
      call_once(at, counts, in_place);
      at.recv_buffer.download();
      if (!variants_[variant_].mpi) {
        local_wrong = operation_.count_wrong(at.recv_buffer.host() + at.recv_at, counts, settings_, *current_comm_);
      }
    }
    for (int i = 0; i < options_.warmup; ++i) call_once_on_new_input(at, counts, in_place);
    return sum_over_ranks(comm_, local_wrong);
  }

  /// check_and_warm_up(), or nullopt where the current variant's algorithm cannot run this call
  /// (`--algo native` on a backend without native collectives beside one with them): rank 0 says
  /// why, once per variant, and the sweep goes on without it. Every rank refuses such a call
  /// alike, before it communicates.
  std::optional<std::uint64_t> check_and_warm_up_where_it_runs(const PerfCounts& counts, bool in_place) {
    try {
      return check_and_warm_up(counts, in_place);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::unsupported) throw;
      if (comm_.rank() == 0 && !variants_[variant_].said_not_run) {
        fmt::print("# {} not run where its algorithm cannot run the call (first at {} B{}): {}\n",
                   variant_name(variant_), reported_bytes(counts), in_place ? " in place" : "", error.what());
      }
      variants_[variant_].said_not_run = true;
      return std::nullopt;
    }
  }

  /// One timed repeat: µs per call, reduced over ranks as -a asks. Unless -w is 0, one untimed
  /// call goes first, so that the repeat finds the caches as its own calls leave them, not as the
  /// variant timed before it did.
  double timed_microseconds(const PerfCounts& counts, bool in_place) {
    const auto at = placement(counts, in_place);
    if (options_.warmup > 0) call_once_on_new_input(at, counts, in_place);
    comm_.barrier();
    const double seconds = timed_iterations(at, counts, in_place);
    return across_ranks(comm_, seconds * 1e6 / options_.iterations, options_.time_across);
  }

  /// The median of `times_us` with its bandwidths.
  [[nodiscard]] Measurement measure(std::vector<double> times_us, const PerfCounts& counts) const {
    Measurement result;
    result.time_us = median(std::move(times_us));
    result.algbw = result.time_us > 0 ? static_cast<double>(reported_bytes(counts)) / (result.time_us * 1e3) : 0;
    result.busbw = result.algbw * operation_.bus_factor(comm_.size());
    return result;
  }

  /// The median of a slot's repeats, with its bandwidths, recorded for the JSON output.
  Measurement summarize(const Slot& slot, const PerfCounts& counts) {
    Measurement result = measure(slot.times_us, counts);
    result.wrong = slot.wrong;
    result.speedup = slot.speedup;
    const char* buffers = options_.memory == MemoryKind::cuda          ? "cuda"
                          : variants_[slot.variant].user_buffers ? "user"
                                                                 : "shared";
    record(settings_.algorithm.empty() ? "auto" : settings_.algorithm, buffers, to_string(current_comm_->backend()),
           slot.in_place, result, slot.times_us, counts);
    return result;
  }

  /// One JSON record: a measured variant, or the mpi_best reference, at one size and placement,
  /// with its time in each repeat (in the order the repeats ran, so that records of one run pair).
  void record(const std::string& algorithm, const char* buffers, std::string_view backend, bool in_place,
              const Measurement& result, const std::vector<double>& times_us, const PerfCounts& counts,
              const std::string& mpi_call = "") {
    records_.push_back({
        {"op", operation_.name()},
        {"algo", algorithm},
        {"repeats", options_.repeats},
        {"backend", backend},
        {"ranks", comm_.size()},
        {"bytes", reported_bytes(counts)},
        {"count", counts.reported},
        {"dtype", to_string(options_.type)},
        {"redop", operation_.reduces() ? to_string(options_.op) : "none"},
        {"root", operation_.has_root() ? options_.root : -1},
        {"in_place", in_place},
        {"time_us", result.time_us},
        {"repeat_times_us", times_us},
        {"algbw_gbps", result.algbw},
        {"busbw_gbps", result.busbw},
        {"wrong", result.wrong},
        {"speedup", result.speedup},
        {"speedup_over", baseline_name()},
        {"buffers", buffers},
        {"memory", to_string(options_.memory)},
        {"new_input", options_.new_input},
    });
    if (!mpi_call.empty()) records_.back()["mpi_call"] = mpi_call;
  }

  [[nodiscard]] const char* baseline_name() const {
    return std::array{"mpi_best", "native", "none"}[static_cast<int>(baseline_)];
  }

  /// Seconds for the timed iterations. With device buffers, CUDA events on the stream time them,
  /// as nccl-tests does: on a stream-ordered backend the calls are queued back to back; on a
  /// host-driven one each call is waited for before the next. Host buffers: the host clock.
  double timed_iterations(const Placement& at, const PerfCounts& counts, bool in_place) {
    if (stream_ != nullptr) {
      const bool queued = current_comm_->backend() == BackendKind::nccl;
      std::vector<Work> works;
      works.reserve(queued ? static_cast<std::size_t>(options_.iterations) : 0);
      const double milliseconds = verifiable::stream_milliseconds(stream_.get(), [&] {
        for (int i = 0; i < options_.iterations; ++i) {
          auto work = operation_.start(*current_comm_, at.send(), at.recv(), counts, settings_);
          if (queued) {
            works.push_back(std::move(work));
          } else {
            work.wait();
          }
        }
      });
      for (auto& work : works) work.wait();
      return milliseconds / 1e3;
    }
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < options_.iterations; ++i) call_once_on_new_input(at, counts, in_place);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  /// What the header and the summary call the line's round trip.
  static constexpr const char* kLineRoundTrip = "a cache line's round trip between the cores of ranks 0 and 1";

  /// The median of a few rounds of the line's round trip (collective over the node), where there
  /// is a line and the node's ranks have a core each.
  std::optional<double> line_round_trip() {
    if (line_ == nullptr || !line_->has_partner() || line_->ranks_outnumber_cores()) return std::nullopt;
    return line_->median(5, 2000);
  }

  void print_header(std::optional<double> round_trip) const {
    if (comm_.rank() != 0) return;
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    fmt::print("# meshcomm {}_perf: backend {}, {} ranks, algorithm {}, type {}, op {}, time across ranks {}\n",
               operation_.name(), backend_list(), comm_.size(),
               algorithm_list(), to_string(options_.type),
               operation_.reduces() ? to_string(options_.op) : "none",
               std::array{"rank 0", "mean", "min", "max"}[static_cast<int>(options_.time_across)]);
    fmt::print("# iters {} warmup {} repeat {} (median) check {} buffers {} input {} timer {} host {} pid {}\n",
               options_.iterations, options_.warmup, options_.repeats, options_.check ? 1 : 0,
               options_.memory == MemoryKind::cuda ? "cuda"
               : options_.user_buffers            ? (options_.shared_buffers ? "both" : "user")
                                                  : "shared",
               options_.new_input ? "new-each-call" : "as-filled",
               stream_ != nullptr ? "cuda-events" : "host-clock", host,
               getpid());
    if (round_trip) fmt::print("# {}: {:.0f} ns before the sizes (line_bounce_perf)\n", kLineRoundTrip, *round_trip);
    fmt::print("# {}\n#\n", baseline_description());
    const bool compare = baseline_ != Baseline::none;
    auto line = [&](auto... column) {
      fmt::print("# {:>10} {:>12} {:>6} {:>6} {:>5} {:>18}  {:>9} {:>7} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>6}", column...);
    };
    line("", "", "", "", "", "", "out-of-place", "", "", "", "in-place", "", "", "");
    fmt::print("{}\n", compare ? fmt::format(" {:>13}", fmt::format("vs {}", baseline_name())) : "");
    line("size", "count", "type", "redop", "root", "algo", "time", "algbw", "busbw", "#wrong", "time", "algbw",
         "busbw", "#wrong");
    fmt::print("{}\n", compare ? "   out    in" : "");
    line("(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    fmt::print("\n");
  }

  /// The header line that says what the speedup columns are against.
  [[nodiscard]] std::string baseline_description() const {
    const auto calls = operation_.mpi_calls();
    const std::string missing = mpi_best_missing_.empty() ? "" : fmt::format("no mpi_best: {}; ", mpi_best_missing_);
    switch (baseline_) {
      case Baseline::mpi_best:
        return fmt::format("speedup = mpi_best / time, median of per-repeat ratios; mpi_best = of {} and {} + "
                           "MPI_Wait on user buffers, the one with the lower median at each size (rows mpi_best)",
                           calls.blocking, calls.nonblocking);
      case Baseline::native:
        return missing + "speedup = native / time, median of per-repeat ratios; with both buffers, the native with "
                         "the lower median (needs --algo ...,native)";
      case Baseline::none: break;
    }
    return "no speedup column (--baseline none)";
  }

  [[nodiscard]] std::string backend_list() const {
    std::vector<std::string_view> names;
    for (const auto* each : communicators_) names.push_back(to_string(each->backend()));
    return fmt::format("{}", fmt::join(names, " and "));
  }

  [[nodiscard]] std::string algorithm_list() const {
    std::string names;
    for (const auto& algorithm : options_.algorithms) {
      names += (names.empty() ? "" : ",") + (algorithm.empty() ? std::string("auto") : algorithm);
    }
    return names;
  }

  /// What a baseline variant's times are of: Open MPI's call by name, or meshcomm's variant.
  [[nodiscard]] std::string reference_name(std::size_t v) const {
    if (!variants_[v].mpi) return variant_name(v);
    const auto calls = operation_.mpi_calls();
    return std::string(*variants_[v].mpi == MpiCall::blocking ? calls.blocking : calls.nonblocking);
  }

  /// The name of variant `v`: its algorithm, its buffers when both kinds are measured, and its
  /// backend when several are ("ring/user@ucx").
  [[nodiscard]] std::string variant_name(std::size_t v) const {
    std::string name = variants_[v].algorithm.empty() ? "auto" : variants_[v].algorithm;
    if (options_.user_buffers && options_.shared_buffers) name += variants_[v].user_buffers ? "/user" : "/shared";
    if (communicators_.size() > 1) {
      name += fmt::format("@{}", to_string(communicators_[variants_[v].communicator]->backend()));
    }
    return name;
  }

  /// One table row; with a baseline, also the speedup over it.
  void print_row(const PerfCounts& counts, const std::string& name, const std::pair<Measurement, Measurement>& row)
      const {
    if (comm_.rank() != 0) return;
    const auto& [out, in] = row;
    auto placement = [](const Measurement& m) {
      if (m.time_us < 0) return fmt::format("{:>9} {:>7} {:>7} {:>6}", "N/A", "N/A", "N/A", "N/A");
      return fmt::format("{:>9.2f} {:>7.2f} {:>7.2f} {:>6}", m.time_us, m.algbw, m.busbw, m.wrong);
    };
    // A placement without a ratio (its baseline, or itself, did not run) shows a dash.
    auto ratio = [](const Measurement& m) {
      return m.speedup > 0 ? fmt::format(" {:>5.2f}x", m.speedup) : fmt::format(" {:>6}", "-");
    };
    std::string speedup;
    if (out.speedup > 0 || in.speedup > 0) {
      speedup = fmt::format(" {}{}", ratio(out), operation_.has_in_place() ? ratio(in) : std::string());
    }
    fmt::print("  {:>10} {:>12} {:>6} {:>6} {:>5} {:>18}  {}  {}{}\n", reported_bytes(counts), counts.reported,
               to_string(options_.type), operation_.reduces() ? to_string(options_.op) : "none",
               operation_.has_root() ? options_.root : -1, name, placement(out),
               operation_.has_in_place() ? placement(in)
                                         : fmt::format("{:>9} {:>7} {:>7} {:>6}", "N/A", "N/A", "N/A", "N/A"),
               speedup);
    std::fflush(stdout);
  }

  void write_json() const {
    std::ofstream file(options_.json_path);
    if (!file) {
      fmt::print(stderr, "cannot write --json {}\n", options_.json_path);
      return;
    }
    file << nlohmann::json(records_).dump(2) << "\n";
  }

  const PerfOperation& operation_;
  const PerfOptions& options_;
  SharedLine* line_;
  Communicator& comm_;  // the run's barriers and reductions
  std::vector<Communicator*> communicators_;
  std::size_t element_;
  std::uint64_t turn_seed_;  // the run's turn orders (turn_order())
  std::uint32_t new_input_calls_ = 0;  // calls --new-input wrote the input of
  PerfSettings settings_;
  struct Buffers {
    std::shared_ptr<PerfBuffer> send;  // user buffers: the first communicator's, for every one
    std::shared_ptr<PerfBuffer> recv;
  };
  struct Variant {
    std::string algorithm;
    bool user_buffers = false;
    std::size_t communicator = 0;  // index into communicators_
    std::optional<MpiCall> mpi;    // set: Open MPI's own call, not meshcomm's
    bool said_not_run = false;     // rank 0 said that its algorithm could not run some call
  };
  std::vector<std::array<Buffers, 2>> buffers_;  // per communicator: shared (or cuda), user
  std::shared_ptr<void> stream_;  // with --memory cuda
  const Buffers* current_ = nullptr;
  Communicator* current_comm_ = nullptr;
  std::size_t variant_ = 0;
  std::vector<Variant> variants_;
  Baseline baseline_ = Baseline::none;
  std::string mpi_best_missing_;  // why --baseline mpi_best fell back to native
  MPI_Comm mpi_comm_ = MPI_COMM_NULL;  // Open MPI's calls run here, apart from meshcomm's traffic
  std::vector<nlohmann::json> records_;
};

int run_with_threads(const PerfOperation& operation, const PerfOptions& options) {
  auto world = InProcessWorld::create(options.threads);
  std::mutex mutex;
  std::uint64_t wrong = 0;
  std::string failure;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < options.threads; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        InProcessBootstrap bootstrap(world, rank);
        auto comm = Communicator::create(bootstrap);
        const auto found = Sweep(operation, options, {&comm}).run();
        std::lock_guard lock(mutex);
        if (rank == 0) wrong = found;
      } catch (const std::exception& error) {
        std::lock_guard lock(mutex);
        if (failure.empty()) failure = fmt::format("rank {}: {}", rank, error.what());
      }
    });
  }
  for (auto& rank : ranks) rank.join();
  if (!failure.empty()) {
    fmt::print(stderr, "{}_perf: {}\n", operation.name(), failure);
    return 1;
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int run_perf_main(int argc, char** argv, const PerfOperation& operation) {
  const auto program = fmt::format("{}_perf", operation.name());
  MpiSession session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int exit_code = 0;
  auto options = parse_perf_options(argc, argv, program, rank != 0, exit_code);
  if (!options) return exit_code;
  try {
    if (options->backend == BackendKind::inproc) return rank == 0 ? run_with_threads(operation, *options) : 0;
    MpiBootstrap bootstrap;
    std::vector<Communicator> communicators;
    for (auto backend : options->backends) {
      communicators.push_back(Communicator::create(bootstrap, {.backend = backend}));
    }
    std::vector<Communicator*> pointers;
    for (auto& each : communicators) pointers.push_back(&each);
    SharedLine line(MPI_COMM_WORLD);
    return Sweep(operation, *options, std::move(pointers), &line).run() == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}: rank {}: {}\n", program, rank, error.what());
    return 1;
  }
}

}  // namespace meshcomm::perf
