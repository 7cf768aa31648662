// RingPipeline and RingAttention over the inproc backend, P = 1..8.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>

#include "cases/ring_cases.hpp"
#include "harness/thread_ranks.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {
namespace {

TEST(InprocRing, PipelineBothDirections) {
  for (int size = 1; size <= 8; ++size) {
    run_ranks(size, [](Communicator& comm) {
      check_ring_pipeline(comm, RingDirection::forward);
      check_ring_pipeline(comm, RingDirection::backward);
    });
  }
}

class InprocRingAttention : public ::testing::TestWithParam<std::tuple<layers::SequenceLayout, bool>> {};

TEST_P(InprocRingAttention, MatchesSingleRank) {
  const auto [layout, causal] = GetParam();
  for (int size = 1; size <= 8; ++size) {
    std::atomic<double> worst{0};
    run_ranks(size, [&, layout = layout, causal = causal](Communicator& comm) {
      const double error = check_ring_attention(comm, layout, causal);
      double seen = worst.load();
      while (error > seen && !worst.compare_exchange_weak(seen, error)) {
      }
    });
    std::printf("ring attention %s%s P=%d: largest relative error %.2e\n", std::string(to_string(layout)).c_str(),
                causal ? " causal" : "", size, worst.load());
  }
}

TEST(InprocRingAttentionPlan, RunsAgainWithTheSamePipelines) {
  for (const int size : {1, 2, 3}) {
    run_ranks(size, [](Communicator& comm) {
      (void)check_ring_attention(comm, layers::SequenceLayout::zigzag, true, run_host_ring_attention_twice);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, InprocRingAttention,
                         ::testing::Combine(::testing::Values(layers::SequenceLayout::contiguous,
                                                              layers::SequenceLayout::zigzag),
                                            ::testing::Bool()),
                         [](const auto& param_info) {
                           return std::string(to_string(std::get<0>(param_info.param))) +
                                  (std::get<1>(param_info.param) ? "_causal" : "_full");
                         });

TEST(InprocRing, TimedOutStepNamesThePeerAndThePipelineSaysToRecreateIt) {
  run_ranks(
      2,
      [](Communicator& comm) {
        auto ring = RingPipeline::create(comm, {.block_bytes = 64});
        if (comm.rank() == 0) {  // rank 1 never takes part in a step
          auto step = ring.start();
          try {
            step.wait();
            ADD_FAILURE() << "a step with a silent neighbour completed";
          } catch (const Error& error) {
            EXPECT_EQ(error.code(), ErrorCode::timeout) << error.what();
            EXPECT_EQ(error.context().peer, 1) << error.what();
            EXPECT_EQ(error.context().operation, "ring step") << error.what();
            EXPECT_GE(error.context().sequence, 0) << error.what();
          }
          EXPECT_THROW(ring.advance(), Error);  // the transfer failed
          try {
            (void)ring.start();
            ADD_FAILURE() << "a pipeline whose transfer failed started again";
          } catch (const Error& error) {
            EXPECT_EQ(error.code(), ErrorCode::aborted) << error.what();
            EXPECT_NE(std::string(error.what()).find("destroy the pipeline and create a new one"), std::string::npos)
                << error.what();
          }
        }
        comm.barrier(kTestTimeout);  // rank 1 waits here while rank 0's step times out
      },
      std::chrono::milliseconds(500));
}

TEST(InprocRing, EmptyBlockIsRejected) {
  run_ranks(2, [](Communicator& comm) {
    try {
      (void)RingPipeline::create(comm, {.block_bytes = 0});
      ADD_FAILURE() << "a ring of 0-byte blocks was created";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("spec.block_bytes = 0"), std::string::npos) << error.what();
    }
  });
}

TEST(InprocRing, UnevenSequenceIsRejected) {
  try {
    (void)layers::layout_positions(layers::SequenceLayout::zigzag, 30, 4, 0);
    FAIL() << "30 rows over 8 zigzag chunks were accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pad it to 32 rows"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace meshcomm::testing
