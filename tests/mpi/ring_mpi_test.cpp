// RingPipeline and RingAttention over the mpi backend, at the job's size.

#include <gtest/gtest.h>

#include <cstdio>

#include "cases/ring_cases.hpp"
#include "harness/mpi_world.hpp"

namespace meshcomm::testing {
namespace {

TEST(MpiRing, PipelineBothDirections) {
  check_ring_pipeline(mpi_world(), RingDirection::forward);
  check_ring_pipeline(mpi_world(), RingDirection::backward);
}

TEST(MpiRing, AttentionMatchesSingleRank) {
  for (auto layout : {layers::SequenceLayout::contiguous, layers::SequenceLayout::zigzag}) {
    for (bool causal : {false, true}) {
      const double error = check_ring_attention(mpi_world(), layout, causal);
      if (mpi_world().rank() == 0) {
        std::printf("ring attention %s%s P=%d: relative error %.2e (rank 0)\n", std::string(to_string(layout)).c_str(),
                    causal ? " causal" : "", mpi_world().size(), error);
      }
    }
  }
}

TEST(MpiRing, AttentionPlanRunsAgain) {
  (void)check_ring_attention(mpi_world(), layers::SequenceLayout::zigzag, true, run_host_ring_attention_twice);
}

}  // namespace
}  // namespace meshcomm::testing
