#include "call_fingerprint.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "environment.hpp"
#include "patterns/collective_tags.hpp"
#include "setup_exchange.hpp"

namespace meshcomm::detail {

namespace {

bool reduces(CollectiveKind kind) noexcept {
  return kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_reduce;
}

/// What one rank is about to call, as it travels.
struct CallRecord {
  std::uint64_t call = 0;
  std::uint64_t count = 0;  ///< agreed_count
  std::int32_t root = 0;
  std::uint8_t kind = 0;
  std::uint8_t type = 0;
  std::uint8_t op = 0;
  std::uint8_t padding = 0;

  static CallRecord of(const CollectiveArgs& args, std::uint64_t call) {
    CallRecord record;
    record.call = call;
    record.count = agreed_count(args);
    record.root = args.kind == CollectiveKind::broadcast ? args.root : 0;
    record.kind = static_cast<std::uint8_t>(args.kind);
    record.type = static_cast<std::uint8_t>(args.input.type);
    record.op = static_cast<std::uint8_t>(reduces(args.kind) ? args.op : ReduceOp::sum);
    return record;
  }

  bool operator==(const CallRecord&) const = default;

  /// "all_gather count=1000 f32", with the op or root where the kind has one.
  [[nodiscard]] std::string describe() const {
    const auto collective = static_cast<CollectiveKind>(kind);
    std::string text = fmt::format("#{} {} count={} {}", call, to_string(collective), count,
                                   to_string(static_cast<DataType>(type)));
    if (reduces(collective)) text += fmt::format(" {}", to_string(static_cast<ReduceOp>(op)));
    if (collective == CollectiveKind::broadcast) text += fmt::format(" root={}", root);
    return text;
  }
};

/// "0,2" for ranks 0 and 2.
std::string rank_list(const std::vector<int>& ranks) { return fmt::format("{}", fmt::join(ranks, ",")); }

}  // namespace

std::size_t agreed_count(const CollectiveArgs& args) noexcept {
  switch (args.kind) {
    case CollectiveKind::reduce_scatter: return args.output.count;
    case CollectiveKind::all_to_allv: return 0;
    default: return args.input.count;
  }
}

std::uint64_t call_fingerprint(const CollectiveArgs& args) noexcept {
  return collective_fingerprint(args.kind, args.input.type, agreed_count(args),
                                reduces(args.kind) ? args.op : ReduceOp::sum,
                                args.kind == CollectiveKind::broadcast ? args.root : 0);
}

bool fingerprint_exchange_requested() {
  const auto value = environment_variable("MESHCOMM_DEBUG");
  if (!value || *value == "off") return false;
  if (*value == "fingerprint") return true;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_DEBUG = '{}' is not a debug mode; valid: fingerprint (exchange every collective's "
                          "kind, counts, dtype, op and root first) or off",
                          *value));
}

void exchange_and_compare_fingerprints(CommunicatorImpl& comm, const CollectiveArgs& args, std::uint64_t call) {
  const CallRecord mine = CallRecord::of(args, call);
  const auto gathered = exchange_all_gather(comm, std::as_bytes(std::span(&mine, 1)), args.label);
  std::vector<CallRecord> records(static_cast<std::size_t>(comm.size()));
  std::memcpy(records.data(), gathered.data(), gathered.size());
  bool all_agree = true;
  for (const auto& record : records) all_agree = all_agree && record == records.front();
  if (all_agree) return;
  // The same text on every rank: each distinct call with the ranks that made it, in rank order.
  std::vector<std::pair<std::string, std::vector<int>>> calls;
  for (int rank = 0; rank < comm.size(); ++rank) {
    const auto text = records[static_cast<std::size_t>(rank)].describe();
    auto same = std::find_if(calls.begin(), calls.end(), [&](const auto& entry) { return entry.first == text; });
    if (same == calls.end()) calls.push_back({text, {rank}});
    else same->second.push_back(rank);
  }
  std::vector<std::string> parts;
  for (const auto& [text, ranks] : calls) {
    parts.push_back(fmt::format("{} {} {}", ranks.size() == 1 ? "rank" : "ranks", rank_list(ranks), text));
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("the ranks disagree about this collective: {}; every rank must make the same collective "
                          "calls in the same order with the same counts, dtype, op and root",
                          fmt::join(parts, " vs ")),
              comm.context(args.label));
}

}  // namespace meshcomm::detail
