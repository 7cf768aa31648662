#pragma once

#include <memory>
#include <string>

#include "../backend.hpp"
#include "collective_args.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

class NcclChannel;

/// Whether NCCL's own collectives can run `args`: CUDA memory, and no in-place all-to-all.
/// Inline: asked on every call.
[[nodiscard]] inline bool nccl_runs_collective(const CollectiveArgs& args) noexcept {
  return args.output.memory == MemoryKind::cuda && !(args.kind == CollectiveKind::all_to_all && args.in_place);
}

/// Empty if NCCL's own collectives can run `args`, else why not.
[[nodiscard]] std::string nccl_collective_unsupported_reason(const CollectiveArgs& args);

/// Queues NCCL's own collective for `args` on its stream (all-to-all(v) as grouped sends and
/// receives) and returns its work.
std::shared_ptr<WorkState> start_nccl_collective(NcclChannel& channel, const CollectiveArgs& args, int ranks,
                                                 NcclCallSite site);

}  // namespace meshcomm::detail
