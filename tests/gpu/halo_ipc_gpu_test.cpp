// Halo exchanges on CUDA memory between processes sharing one GPU: the mpi backend moves host
// memory only, so p2p plans on CUDA memory pack into outboxes that the receivers read through
// CUDA IPC. Run under mpirun -np 2 and 3.

#include <gtest/gtest.h>

#include <string>

#include "cases/halo_cases.hpp"
#include "harness/gpu_skip.hpp"
#include "harness/mpi_world.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {
namespace {

TEST(IpcHalo, Contents) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_contents(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

TEST(IpcHalo, AdjointIsTranspose) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_adjoint(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

TEST(IpcHalo, GraphForm) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_halo_graph(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

TEST(IpcHalo, OtherStrategiesAreRefusedByName) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  const std::vector<std::size_t> rows(static_cast<std::size_t>(mpi_world().size()), 4);
  try {
    (void)HaloPlan::create(mpi_world(), {.shard_rows = rows, .left = 1, .right = 1, .row_elements = 2,
                                         .strategy = HaloStrategy::neighbor_alltoallv, .memory = MemoryKind::cuda});
    ADD_FAILURE() << "neighbor_alltoallv on cuda memory over mpi was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(error.what()).find("strategy neighbor_alltoallv on cuda memory"), std::string::npos)
        << error.what();
  }
  // The communicator is still usable.
  check_halo_contents(mpi_world(), HaloStrategy::p2p, MemoryKind::cuda);
}

}  // namespace
}  // namespace meshcomm::testing
