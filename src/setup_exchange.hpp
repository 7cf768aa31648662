#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// Gathers `mine` (the same size on every rank) from every rank of `comm`, in rank order, over
/// the internal lane; waits at most the communicator's timeout. For setup-sized data only.
std::vector<std::byte> exchange_all_gather(CommunicatorImpl& comm, std::span<const std::byte> mine,
                                           OperationLabel label);

}  // namespace meshcomm::detail
