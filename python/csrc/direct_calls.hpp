#pragma once

// For the perftests: meshcomm's own calls on a torch group's communicator, timed in the same
// processes and on the same tensors as the calls through torch.distributed, so that what the
// plugin adds is measured side by side with its C++ call rather than across launches (whose
// machine state differs on a shared host).

#include <ATen/ATen.h>

#include <string>

#include "process_group.hpp"

namespace meshcomm::torch_plugin {

/// Seconds taken by `iterations` calls of meshcomm's `operation` ("all_reduce" and "broadcast"
/// from root 0, in place on `source`; "all_gather", "reduce_scatter" and "all_to_all" from
/// `source` into `target`) on `group`'s communicator, each waited for before the next, as the C++
/// perftests time them. The group must have no call under way; its torch calls wait meanwhile.
double time_direct_calls(ProcessGroupMeshcomm& group, const std::string& operation, const at::Tensor& source,
                         const at::Tensor& target, int iterations);

}  // namespace meshcomm::torch_plugin
