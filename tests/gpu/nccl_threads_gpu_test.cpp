// The nccl backend with one rank as a thread (NCCL allows one rank per GPU, and there may be
// only one GPU): the collectives on CUDA memory, stream order, splits and the timeout path.

#include <gtest/gtest.h>

#include "harness/gpu_skip.hpp"
#include "harness/thread_ranks.hpp"
#include "nccl_checks.hpp"

namespace meshcomm::testing {
namespace {

void run_nccl_rank(const std::function<void(Communicator&)>& body) {
  run_ranks(1, body, kTestTimeout, BackendKind::nccl);
}

TEST(NcclThreads, CollectiveMatrices) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_collective_matrices);
}

TEST(NcclThreads, StreamOrder) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_stream_order);
}

TEST(NcclThreads, BackToBack) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_back_to_back);
}

TEST(NcclThreads, Halo) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_halo);
}

TEST(NcclThreads, Split) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_split);
}

TEST(NcclThreads, TimeoutAborts) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  run_nccl_rank(check_nccl_timeout_aborts);
}

}  // namespace
}  // namespace meshcomm::testing
