#include "call_record.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshcomm::detail {

CallRecord CallRecord::of(const CollectiveArgs& args) {
  CallRecord record;
  record.call = args.call;
  record.count = agreed_count(args);
  record.root = args.kind == CollectiveKind::broadcast ? args.root : 0;
  record.kind = static_cast<std::uint8_t>(args.kind);
  record.type = static_cast<std::uint8_t>(args.input.type);
  record.op = static_cast<std::uint8_t>(reduces(args.kind) ? args.op : ReduceOp::sum);
  record.in_place = agreed_in_place(args) ? 1 : 0;
  return record;
}

CallRecord CallRecord::barrier(std::uint64_t call) {
  CallRecord record;
  record.call = call;
  record.kind = kBarrierKind;
  return record;
}

std::string_view CallRecord::operation() const noexcept {
  return kind == kBarrierKind ? "barrier" : to_string(static_cast<CollectiveKind>(kind));
}

CallRecord CallRecord::at(const std::source_location& where) const {
  CallRecord record = *this;
  const std::string_view file = where.file_name();
  const auto slash = file.rfind('/');
  const auto text = fmt::format("{}:{}", slash == std::string_view::npos ? file : file.substr(slash + 1), where.line());
  const auto length = std::min(text.size(), record.site.size() - 1);
  std::copy_n(text.begin(), length, record.site.begin());
  return record;
}

std::string CallRecord::describe() const {
  const auto collective = static_cast<CollectiveKind>(kind);
  std::string text = kind == kBarrierKind ? fmt::format("#{} barrier", call)
                                          : fmt::format("#{} {} count={} {}", call, operation(), count,
                                                        to_string(static_cast<DataType>(type)));
  if (reduces(collective)) text += fmt::format(" {}", to_string(static_cast<ReduceOp>(op)));
  if (collective == CollectiveKind::broadcast) text += fmt::format(" root={}", root);
  if (in_place != 0) text += " in place";
  if (site[0] != '\0') text += fmt::format(" at {}", site.data());
  return text;
}

std::string describe_disagreement(std::span<const CallRecord> records) {
  if (std::all_of(records.begin(), records.end(), [&](const auto& record) { return record == records.front(); })) {
    return {};
  }
  std::vector<std::pair<std::string, std::vector<int>>> calls;
  for (int rank = 0; rank < static_cast<int>(records.size()); ++rank) {
    const auto text = records[static_cast<std::size_t>(rank)].describe();
    auto same = std::find_if(calls.begin(), calls.end(), [&](const auto& entry) { return entry.first == text; });
    if (same == calls.end()) calls.push_back({text, {rank}});
    else same->second.push_back(rank);
  }
  std::vector<std::string> parts;
  for (const auto& [text, ranks] : calls) {
    parts.push_back(fmt::format("{} {} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ","), text));
  }
  return fmt::format("{}", fmt::join(parts, " vs "));
}

void throw_if_disagreeing(std::span<const CallRecord> records, const ErrorContext& context) {
  const auto disagreement = describe_disagreement(records);
  if (disagreement.empty()) return;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("the ranks disagree about this collective: {}; every rank must make the same collective "
                          "calls in the same order with the same counts, dtype, op and root (and an all-reduce in "
                          "place on all of them or none)",
                          disagreement),
              context);
}

Error disagreeing_call_error(const ErrorContext& context, std::size_t expected_bytes, int tag, std::size_t sent_bytes,
                             int sent_tag) {
  return Error(sent_bytes != expected_bytes ? ErrorCode::size_mismatch : ErrorCode::invalid_argument,
               fmt::format("this rank ({}) and rank {} disagree about this collective: rank {} sent {} bytes for it "
                           "(tag {}) as a call of another kind, count, dtype, op, root or placement, where this rank "
                           "expects {} bytes (tag {}); every rank must make the same collective calls "
                           "(MESHCOMM_DEBUG=fingerprint lists every rank's call)",
                           context.rank, context.peer, context.peer, sent_bytes, sent_tag, expected_bytes, tag),
               context);
}

std::size_t agreed_count(const CollectiveArgs& args) noexcept {
  switch (args.kind) {
    case CollectiveKind::reduce_scatter: return args.output.count;
    case CollectiveKind::all_to_allv: return 0;
    default: return args.input.count;
  }
}

}  // namespace meshcomm::detail
