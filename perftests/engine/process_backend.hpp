#pragma once

#include <string>
#include <vector>

#include "command_line.hpp"
#include "meshcomm/communicator.hpp"

namespace meshcomm::perf {

/// Adds `--backend mpi|ucx` to a perftest whose ranks are mpirun's processes (MPI starts them
/// either way); the choice lands in `backend`. With `several`, a comma-separated list ("mpi,ucx")
/// is allowed too: a communicator on each, measured side by side.
void add_process_backend_option(CommandLine& command_line, std::string& backend, bool several = false);

/// The backend `--backend` names ("mpi" or "ucx").
BackendKind process_backend(const std::string& name);

/// The backends of a comma-separated `--backend` list, in order.
std::vector<BackendKind> process_backends(const std::string& list);

}  // namespace meshcomm::perf
