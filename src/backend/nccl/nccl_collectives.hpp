#pragma once

#include <memory>
#include <string>

#include "../backend.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

class NcclChannel;
struct CollectiveArgs;

/// Empty if NCCL's own collectives can run `args`, else why not.
[[nodiscard]] std::string nccl_collective_unsupported_reason(const CollectiveArgs& args);

/// Queues NCCL's own collective for `args` on its stream (all-to-all(v) as grouped sends and
/// receives) and returns its work.
std::shared_ptr<WorkState> start_nccl_collective(NcclChannel& channel, const CollectiveArgs& args, int ranks,
                                                 NcclCallSite site);

}  // namespace meshcomm::detail
