#include "flight_recorder.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "environment.hpp"

namespace meshcomm::detail {

std::int64_t FlightRecorder::now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

/// Converts ticks() to steady-clock nanoseconds: measured over a few milliseconds when a record
/// is written (rarely), so nothing is measured on the calls' path.
struct TicksToNanoseconds {
  std::int64_t now_ns;
  std::uint64_t now_ticks;
  double ns_per_tick;

  static TicksToNanoseconds measure(std::int64_t (*clock_ns)(), std::uint64_t (*ticks)()) {
#if defined(__x86_64__)
    const std::int64_t start_ns = clock_ns();
    const std::uint64_t start_ticks = ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::int64_t end_ns = clock_ns();
    const std::uint64_t end_ticks = ticks();
    const double ratio = static_cast<double>(end_ns - start_ns) / static_cast<double>(end_ticks - start_ticks);
    return {end_ns, end_ticks, ratio};
#else
    const std::int64_t now = clock_ns();
    (void)ticks;
    return {now, static_cast<std::uint64_t>(now), 1.0};
#endif
  }

  [[nodiscard]] std::int64_t at(std::uint64_t ticks) const {
    return now_ns - static_cast<std::int64_t>(static_cast<double>(now_ticks - ticks) * ns_per_tick);
  }
};

}  // namespace

std::string FlightRecorder::to_json(const Error& error) const {
  const auto clock = TicksToNanoseconds::measure(&FlightRecorder::now_ns, &FlightRecorder::ticks);
  nlohmann::json calls = nlohmann::json::array();
  const std::uint64_t first = next_ > kEntries ? next_ - kEntries : 0;
  for (std::uint64_t index = first; index < next_; ++index) {
    const FlightEntry& entry = entries_[index % kEntries];
    nlohmann::json call = {{"operation", entry.operation}, {"sequence", entry.sequence}, {"bytes", entry.bytes},
                           {"started_ns", clock.at(entry.started_ticks)}};
    if (entry.collective >= 0) {
      call["collective"] = entry.collective;
      call["type"] = std::string(to_string(entry.type));
    }
    if (entry.peer >= 0) call["peer"] = entry.peer;
    // A call whose Work no one saw complete may still have completed: "not seen" is what is known.
    // One seen complete was so by the start of the next call recorded, or by now.
    if (entry.seen_complete_before == 0) {
      call["completed"] = false;
    } else if (entry.seen_complete_before < next_) {
      call["completed_by_ns"] = clock.at(entries_[entry.seen_complete_before % kEntries].started_ticks);
    } else {
      call["completed_by_ns"] = clock.now_ns;
    }
    calls.push_back(std::move(call));
  }
  const nlohmann::json record = {{"rank", rank_},
                                 {"size", size_},
                                 {"world_rank", world_rank_},
                                 {"backend", backend_},
                                 {"calls_recorded", next_},
                                 {"dumped_ns", clock.now_ns},
                                 {"error", error.what()},
                                 {"error_sequence", error.context().sequence},
                                 {"calls", std::move(calls)}};
  return record.dump(1);
}

void FlightRecorder::dump(const Error& error) noexcept {
  if (dumped_.exchange(true)) return;
  try {
    const std::string text = to_json(error);
    if (const auto directory = environment_variable("MESHCOMM_TRACE_DIR")) {
      static std::atomic<int> dumps{0};  // one file per communicator that fails in this process
      const std::string path = fmt::format("{}/meshcomm-trace-rank{}-pid{}-{}.json", *directory, world_rank_,
                                           static_cast<long>(getpid()), dumps.fetch_add(1));
      std::ofstream(path) << text << "\n";
      std::fprintf(stderr, "meshcomm: rank %d: the last calls before this failure are in %s\n", world_rank_,
                   path.c_str());
    } else {
      std::fprintf(stderr, "meshcomm: rank %d: the last calls before this failure:\n%s\n", world_rank_, text.c_str());
    }
  } catch (...) {
    // A record that cannot be written must not hide the failure it belongs to.
  }
}

}  // namespace meshcomm::detail
