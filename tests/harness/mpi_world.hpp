#pragma once

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// The communicator over every process of the `mpirun` job, created by the MPI test main.
Communicator& mpi_world();

}  // namespace meshcomm::testing
