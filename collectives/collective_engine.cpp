#include "collective_engine.hpp"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "call_fingerprint.hpp"
#include "device/device_runtime.hpp"
#include "eager/eager_store_choice.hpp"
#include "environment.hpp"
#include "hot_path.hpp"
#include "recycled_allocation.hpp"
#include "streaming_copy.hpp"

namespace meshcomm::detail {

namespace {

/// Marks the communicator fatal when a started collective fails, then rethrows.
class FatalOnFailure final : public WorkState {
 public:
  FatalOnFailure(std::shared_ptr<WorkState> inner, std::shared_ptr<FatalState> fatal)
      : inner_(std::move(inner)), fatal_(std::move(fatal)) {}
  bool test() override {
    try {
      return inner_->test();
    } catch (const Error& error) {
      fatal_->set(error);
      throw;
    }
  }
  void wait_until(Clock::time_point deadline) override {
    try {
      inner_->wait_until(deadline);
    } catch (const Error& error) {
      fatal_->set(error);
      throw;
    }
  }

 private:
  std::shared_ptr<WorkState> inner_;
  std::shared_ptr<FatalState> fatal_;
};

/// The work of a started collective, which makes the communicator fatal if it fails.
inline Work work_failing_communicator(CommunicatorImpl& comm, std::shared_ptr<WorkState>&& state,
                                      std::uint64_t record_index) {
  const auto& fatal = comm.backend().fatal_state();
  if (state->fail_communicator_on_error(fatal)) return comm.make_work(std::move(state), record_index);
  return comm.make_work(make_recycled<FatalOnFailure>(std::move(state), fatal), record_index);
}

}  // namespace

CollectiveEngine::CollectiveEngine(AlgorithmList algorithms, SelectionTable table, DebugExchange debug_exchange)
    : algorithms_(std::move(algorithms)), table_(std::move(table)), debug_exchange_(debug_exchange) {
  static_assert(static_cast<std::size_t>(CollectiveKind::broadcast) + 1 == kKinds);
  static_assert(static_cast<std::size_t>(BackendKind::nccl) + 1 == kBackends);
  for (std::size_t kind = 0; kind < kKinds; ++kind) {
    for (std::size_t backend = 0; backend < kBackends; ++backend) {
      const auto collective = static_cast<CollectiveKind>(kind);
      for (const auto& rule : table_.rules_for(collective, static_cast<BackendKind>(backend))) {
        if (const auto* algorithm = algorithms_.find(collective, rule.algorithm)) {
          rows_[kind][backend].push_back({.rule = rule, .algorithm = algorithm});
        }
      }
      if (auto name = table_.unconditional_first(collective, static_cast<BackendKind>(backend))) {
        const auto* unconditional = algorithms_.find(collective, *name);
        straight_to_native_[kind][backend] =
            unconditional != nullptr && unconditional->is_native() && !table_.forced(collective);
      }
    }
  }
}

std::shared_ptr<const CollectiveEngine> CollectiveEngine::from_environment() {
  // A malformed MESHCOMM_STREAMING_COPY_BYTES, MESHCOMM_STREAMING_STORES or
  // MESHCOMM_EAGER_PEER_READS fails the communicator's creation on every rank alike, before its
  // eager slots are set up together, not a copy.
  (void)streaming_copy_threshold();
  (void)reduction_store_choice();
  (void)peer_reads_from_environment();
  auto algorithms = AlgorithmList::built_in();
  auto table = SelectionTable::measured_defaults();
  if (auto text = environment_variable("MESHCOMM_ALGO")) table.force_from_text(*text, "MESHCOMM_ALGO", algorithms);
  return std::make_shared<CollectiveEngine>(std::move(algorithms), std::move(table), debug_exchange_requested());
}

const Algorithm& CollectiveEngine::choose_by_name_or_list(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                          std::string_view requested) const {
  auto forced = requested.empty() ? table_.forced(args.kind) : std::optional<std::string_view>(requested);
  if (forced) {
    const auto* algorithm = algorithms_.find(args.kind, *forced);
    if (algorithm == nullptr) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("algorithm '{}' is not an algorithm of {}; valid algorithms are {}", *forced,
                              to_string(args.kind), fmt::join(algorithms_.names(args.kind), ", ")),
                  comm.context(args.label));
    }
    if (auto reason = algorithm->unsupported_reason(args, comm); !reason.empty()) {
      throw Error(ErrorCode::unsupported,
                  fmt::format("algorithm '{}' cannot run this {}: {}", *forced, to_string(args.kind), reason),
                  comm.context(args.label));
    }
    return *algorithm;
  }
  for (auto name : algorithms_.names(args.kind)) {
    const auto* algorithm = algorithms_.find(args.kind, name);
    if (algorithm->runs(args, comm)) return *algorithm;
  }
  throw Error(ErrorCode::unsupported, fmt::format("no algorithm can run this {}", to_string(args.kind)),
              comm.context(args.label));
}

const Algorithm* CollectiveEngine::first_in_order(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                  const std::function<bool(const Algorithm&)>& accepts) const {
  const std::size_t bytes = args.bytes();
  for (const auto& row : rows(args.kind, comm.backend_kind())) {
    if (row.algorithm != nullptr && row.rule.holds(bytes, comm.size(), comm.shares_one_host(), args.in_place) &&
        accepts(*row.algorithm)) {
      return row.algorithm;
    }
  }
  for (auto name : algorithms_.names(args.kind)) {
    const auto* algorithm = algorithms_.find(args.kind, name);
    if (algorithm != nullptr && accepts(*algorithm)) return algorithm;
  }
  return nullptr;
}

const Algorithm& CollectiveEngine::takeover_for(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                const Algorithm& current) const {
  const Algorithm* takeover = first_in_order(comm, args, [&](const Algorithm& algorithm) {
    return &algorithm != &current && (algorithm.takeover_tags() != 0 || algorithm.takes_over_in_slots()) &&
           algorithm.runs(args, comm);
  });
  if (takeover != nullptr) return *takeover;
  throw Error(ErrorCode::internal,
              fmt::format("no algorithm can take this {} over from '{}'", to_string(args.kind), current.name()),
              comm.context(args.label));
}

const Algorithm* CollectiveEngine::runner_up_for(const CommunicatorImpl& comm, const CollectiveArgs& args,
                                                 const Algorithm& current, const Algorithm& takeover) const {
  return first_in_order(comm, args, [&](const Algorithm& algorithm) {
    return &algorithm != &current && &algorithm != &takeover && !algorithm.is_native() &&
           algorithm.takeover_tags() != 0 && algorithm.runs(args, comm);
  });
}

MESHCOMM_HOT Work CollectiveEngine::start(CommunicatorImpl& comm, CollectiveArgs& args,
                                          std::string_view requested) const {
  const std::uint64_t call = args.call = comm.next_collective();
  args.record_index =
      comm.record({.operation = to_string(args.kind).data(), .sequence = args.label.sequence,
                   .collective = static_cast<std::int64_t>(call), .bytes = args.bytes(), .type = args.input.type});
  if (debug_exchange_ != DebugExchange::off) [[unlikely]] exchange_and_compare_fingerprints(comm, args, debug_exchange_);
  // A backend whose own collective the table takes unconditionally is asked once, in one call,
  // whether it runs this one and to start it: a stream-ordered one (nccl) always, a host-driven
  // one on host memory (on CUDA memory it must first wait for the stream, below).
  if (requested.empty() && (comm.stream_ordered() || args.output.memory == MemoryKind::host) &&
      straight_to_native_[static_cast<std::size_t>(args.kind)][static_cast<std::size_t>(comm.backend_kind())])
      [[likely]] {
    if (auto state = comm.backend().try_start_native(args)) [[likely]] {
      return work_failing_communicator(comm, std::move(state), args.record_index);
    }
  }
  args.algorithm_named = !requested.empty() || table_.forced(args.kind).has_value();
  return start_chosen(comm, args, requested);
}

Work CollectiveEngine::start_chosen(CommunicatorImpl& comm, const CollectiveArgs& args,
                                    std::string_view requested) const {
  const auto& algorithm = choose(comm, args, requested);
  std::optional<CollectiveTagWindow> tags;
  if (algorithm.takes_tags()) tags.emplace(comm, call_fingerprint(args), args.call);
  // Algorithms driven from the host read CUDA buffers as they start: the stream's earlier work
  // (which produced the input) must be complete first.
  const bool queued_on_stream = algorithm.is_native() && comm.stream_ordered();
  if (args.output.memory == MemoryKind::cuda && !queued_on_stream) device::synchronize(args.stream);
  auto state = algorithm.start(comm, args);
  if (state == nullptr) {  // complete inside the call
    comm.record_completed(args.record_index);
    return Work();
  }
  return work_failing_communicator(comm, std::move(state), args.record_index);
}

}  // namespace meshcomm::detail
