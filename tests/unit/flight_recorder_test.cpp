// The flight record places each completion by the start of the next call recorded after it, or by
// the record's writing: a call completed before another started reads that call's start time, one
// never seen complete says so, and no completion is placed before its own call's start.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "flight_recorder.hpp"

namespace meshcomm::detail {
namespace {

nlohmann::json calls_of(const FlightRecorder& recorder) {
  return nlohmann::json::parse(recorder.to_json(Error(ErrorCode::timeout, "for the test")))["calls"];
}

TEST(FlightRecorder, ACompletionIsPlacedByTheNextCallsStart) {
  FlightRecorder recorder(0, 2, 0, "inproc");
  const auto first = recorder.record({.operation = "isend", .sequence = 0});
  const auto second = recorder.record({.operation = "irecv", .sequence = 1});
  recorder.completed(first);
  const auto third = recorder.record({.operation = "all_gather", .sequence = 2, .collective = 0});
  recorder.completed(third);
  (void)second;  // never seen complete

  const auto calls = calls_of(recorder);
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[0]["completed_by_ns"], calls[2]["started_ns"]);
  EXPECT_FALSE(calls[1].contains("completed_by_ns"));
  EXPECT_EQ(calls[1]["completed"], false);
  // The last call's completion has no later call: it is placed by the record's writing.
  EXPECT_GE(calls[2]["completed_by_ns"].get<std::int64_t>(), calls[2]["started_ns"].get<std::int64_t>());
  for (const auto& call : calls) {
    if (call.contains("completed_by_ns")) {
      EXPECT_GE(call["completed_by_ns"].get<std::int64_t>(), call["started_ns"].get<std::int64_t>());
    }
  }
}

TEST(FlightRecorder, ACallThatGaveWayIsNotMarked) {
  FlightRecorder recorder(0, 2, 0, "inproc");
  const auto oldest = recorder.record({.operation = "isend", .sequence = 0});
  for (std::int64_t sequence = 1; sequence <= static_cast<std::int64_t>(FlightRecorder::kEntries); ++sequence) {
    recorder.record({.operation = "irecv", .sequence = sequence});
  }
  recorder.completed(oldest);  // its entry now holds a newer call, which must stay unseen

  const auto calls = calls_of(recorder);
  ASSERT_EQ(calls.size(), FlightRecorder::kEntries);
  EXPECT_EQ(calls.front()["sequence"], 1);
  for (const auto& call : calls) EXPECT_EQ(call["completed"], false);
}

}  // namespace
}  // namespace meshcomm::detail
