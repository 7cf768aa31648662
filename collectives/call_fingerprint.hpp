#pragma once

#include <cstddef>
#include <cstdint>

#include "call_record.hpp"
#include "collective_args.hpp"
#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// collective_fingerprint of what every rank of a correct call agrees on (CollectiveTags).
std::uint64_t call_fingerprint(const CollectiveArgs& args) noexcept;

/// What the ranks exchange before each collective, from MESHCOMM_DEBUG.
enum class DebugExchange : std::uint8_t {
  off,          ///< unset or "off": nothing
  fingerprint,  ///< "fingerprint": each call's kind, counts, dtype, op, root and number
  call_site,    ///< "callsite": the same and the caller's source file and line
};

/// MESHCOMM_DEBUG's exchange. Throws Error(invalid_argument) naming the variable, its value and
/// the valid ones.
DebugExchange debug_exchange_requested();

/// MESHCOMM_DEBUG=fingerprint, before collective number `args.call` starts: the ranks exchange what
/// each is about to call (kind, dtype, counts, op, root, the collective's number) and, where any
/// disagree, every rank throws the same Error(invalid_argument) listing each rank's call, before
/// anything moves. A rank that never arrives makes the others time out naming it.
/// With `exchange` call_site, the callers' source lines must agree too, so that a rank that
/// skips one of two calls of the same shape is caught at the first one.
void exchange_and_compare_fingerprints(CommunicatorImpl& comm, const CollectiveArgs& args, DebugExchange exchange);

}  // namespace meshcomm::detail
