#include "call_fingerprint.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "environment.hpp"
#include "patterns/collective_tags.hpp"
#include "setup_exchange.hpp"

namespace meshcomm::detail {

std::uint64_t call_fingerprint(const CollectiveArgs& args) noexcept {
  return collective_fingerprint(args.kind, args.input.type, agreed_count(args),
                                reduces(args.kind) ? args.op : ReduceOp::sum,
                                args.kind == CollectiveKind::broadcast ? args.root : 0, agreed_in_place(args));
}

DebugExchange debug_exchange_requested() {
  const auto value = environment_variable("MESHCOMM_DEBUG");
  if (!value || value->empty() || *value == "off") return DebugExchange::off;
  if (*value == "fingerprint") return DebugExchange::fingerprint;
  if (*value == "callsite") return DebugExchange::call_site;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_DEBUG = '{}' is not a debug mode; valid: fingerprint (exchange every collective's "
                          "kind, counts, dtype, op and root first), callsite (the same and the caller's source line) "
                          "or off",
                          *value));
}

void exchange_and_compare_fingerprints(CommunicatorImpl& comm, const CollectiveArgs& args, DebugExchange exchange) {
  const CallRecord mine =
      exchange == DebugExchange::call_site ? CallRecord::of(args).at(args.site) : CallRecord::of(args);
  const auto gathered = exchange_all_gather(comm, std::as_bytes(std::span(&mine, 1)), args.label);
  std::vector<CallRecord> records(static_cast<std::size_t>(comm.size()));
  std::memcpy(records.data(), gathered.data(), gathered.size());
  throw_if_disagreeing(records, comm.context(args.label));
}

}  // namespace meshcomm::detail
