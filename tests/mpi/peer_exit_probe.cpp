// A peer that vanishes: rank 1 exits right after the communicator is created, without MPI_Finalize.
// Rank 0's receive from it must end in a timeout naming peer 1, and rank 0 must then leave too:
// its MpiSession's MPI_Finalize would wait for rank 1 forever, so it ends the process after the
// timeout, saying why. Run under `mpirun --mca orte_abort_on_non_zero_status 0 -np 2` with a short
// MESHCOMM_TIMEOUT; ctest checks what rank 0 printed (a hang fails by ctest's timeout).

#include <unistd.h>

#include <cstdio>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  meshcomm::MpiBootstrap bootstrap;
  auto comm = meshcomm::Communicator::create(bootstrap);
  if (comm.rank() == 1) _exit(3);
  if (comm.rank() != 0) return 0;
  std::vector<float> incoming(4);
  try {
    comm.irecv(incoming, 1, 5).wait();
    std::printf("rank 0: the receive from the vanished peer completed\n");
  } catch (const meshcomm::Error& error) {
    std::printf("rank 0: %s\n", error.what());
  }
  std::printf("rank 0: leaving main\n");
  std::fflush(stdout);
  return 0;
}
