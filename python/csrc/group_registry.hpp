#pragma once

// Process groups of the meshcomm backend by name, so that dispatcher ops (which take strings,
// not Python objects) can find the communicator of a group.

#include <string>

#include "process_group.hpp"

namespace meshcomm::torch_plugin {

/// Files `group` under `name` (replacing any group of that name); the caller keeps it alive
/// until it is forgotten.
void register_group(const std::string& name, const c10::intrusive_ptr<ProcessGroupMeshcomm>& group);

/// Drops the group filed under `name`, if any.
void forget_group(const std::string& name);

/// The group filed under `name`; throws Error(invalid_argument) naming the known ones otherwise.
c10::intrusive_ptr<ProcessGroupMeshcomm> group_named(const std::string& name, const char* call);

}  // namespace meshcomm::torch_plugin
