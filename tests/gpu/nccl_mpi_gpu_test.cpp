// The nccl backend under mpirun, one rank per process and per GPU (run with -np 1 on a machine
// with one GPU: NCCL refuses two ranks on one GPU). Each test makes its own nccl communicator
// from an MPI bootstrap; host traffic goes through MPI.

#include <gtest/gtest.h>

#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/mpi_bootstrap.hpp"
#include "nccl_checks.hpp"

namespace meshcomm::testing {
namespace {

void run_nccl_world(void (*check)(Communicator&)) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, kTestTimeout);
  auto comm = Communicator::create(bootstrap, {.backend = BackendKind::nccl, .timeout = kTestTimeout});
  check(comm);
}

TEST(NcclMpi, CollectiveMatrices) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_collective_matrices);
}

TEST(NcclMpi, StreamOrder) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_stream_order);
}

TEST(NcclMpi, BackToBack) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_back_to_back);
}

TEST(NcclMpi, Halo) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_halo);
}

TEST(NcclMpi, Split) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_split);
}

TEST(NcclMpi, TimeoutAborts) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_world(check_nccl_timeout_aborts);
}

}  // namespace
}  // namespace meshcomm::testing
