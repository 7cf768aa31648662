#pragma once

#include <cstddef>
#include <cstdint>

#include "call_record.hpp"
#include "collective_args.hpp"
#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// collective_fingerprint of what every rank of a correct call agrees on (CollectiveTags).
std::uint64_t call_fingerprint(const CollectiveArgs& args) noexcept;

/// Whether MESHCOMM_DEBUG asks for fingerprint exchanges ("fingerprint"; unset, empty or "off":
/// no). Throws Error(invalid_argument) naming the variable, its value and the valid ones.
bool fingerprint_exchange_requested();

/// MESHCOMM_DEBUG=fingerprint, before collective number `args.call` starts: the ranks exchange what
/// each is about to call (kind, dtype, counts, op, root, the collective's number) and, where any
/// disagree, every rank throws the same Error(invalid_argument) listing each rank's call, before
/// anything moves. A rank that never arrives makes the others time out naming it.
void exchange_and_compare_fingerprints(CommunicatorImpl& comm, const CollectiveArgs& args);

}  // namespace meshcomm::detail
