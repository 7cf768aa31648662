// Ranks that part ways after one agreeing all-gather, so that each fails and writes its flight
// record (MESHCOMM_TRACE_DIR): `other` - rank 1 calls a barrier where rank 0 calls a second
// all-gather; `missing` - rank 1 waits on a receive nobody sends instead. Run under mpirun -np 2
// with a short MESHCOMM_TIMEOUT; tests/mpi/flight_record.sh merges the records.

#include <cstdio>
#include <string>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "other";
  meshcomm::MpiBootstrap bootstrap;
  auto comm = meshcomm::Communicator::create(bootstrap);
  std::vector<float> block(1024, 1.0F), gathered(1024 * static_cast<std::size_t>(comm.size()));
  try {
    comm.all_gather(block, gathered).wait();
    if (comm.rank() == 0) {
      comm.all_gather(block, gathered).wait();
    } else if (mode == "other") {
      comm.barrier();
    } else {
      comm.irecv(block, 0, 77).wait();
    }
    std::printf("rank %d: no failure\n", comm.rank());
  } catch (const meshcomm::Error& error) {
    std::printf("rank %d: %s\n", comm.rank(), error.what());
  }
  return 0;
}
