// RingPipeline on CUDA memory between processes sharing one GPU: buffers and events travel as
// CUDA IPC handles, blocks by copy kernel or copy engines; RingAttention on the GPU over it.
// Run under mpirun -np 2 and 3.

#include <gtest/gtest.h>

#include "harness/gpu_skip.hpp"
#include "harness/mpi_world.hpp"
#include "ring_attention_checks.hpp"
#include "ring_checks.hpp"

namespace meshcomm::testing {
namespace {

TEST(IpcRing, SmCopy) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_ring_round(mpi_world(), RingTransfer::sm_copy, RingDirection::forward);
  check_ring_round(mpi_world(), RingTransfer::sm_copy, RingDirection::backward);
}

TEST(IpcRing, CopyEngine) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  check_ring_round(mpi_world(), RingTransfer::copy_engine, RingDirection::forward);
  check_ring_round(mpi_world(), RingTransfer::copy_engine, RingDirection::backward);
}

TEST(IpcRingAttention, MatchesSingleRankAttention) {
  MESHCOMM_SKIP_WITHOUT_GPU();
  for (const auto transfer : {RingTransfer::sm_copy, RingTransfer::copy_engine}) {
    for (const auto layout : {layers::SequenceLayout::contiguous, layers::SequenceLayout::zigzag}) {
      for (const bool causal : {false, true}) {
        (void)check_ring_attention(mpi_world(), layout, causal, device_ring_attention(transfer));
      }
    }
  }
}

}  // namespace
}  // namespace meshcomm::testing
