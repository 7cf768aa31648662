// Strategy rma: rows put straight into extended buffers from allocate_shared, exchange after
// exchange, never over rows a rank has not finished reading; other backends refuse it by name.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>
#include <thread>

#include "harness/mpi_world.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/halo.hpp"
#include "meshcomm/shared_buffer.hpp"

namespace meshcomm::testing {
namespace {

constexpr std::size_t kElements = 3;

/// Element e of global row `row` in exchange `round`: exact in f32, distinct per round.
float value(int round, std::size_t row, std::size_t e) { return static_cast<float>(round * 100000 + row * 10 + e); }

struct Shards {
  std::vector<std::size_t> rows;
  std::size_t total = 0;
  std::size_t start = 0;
};

Shards shards_of(const Communicator& comm) {
  Shards shards;
  for (int rank = 0; rank < comm.size(); ++rank) shards.rows.push_back(4 + static_cast<std::size_t>(rank % 3));
  shards.total = std::accumulate(shards.rows.begin(), shards.rows.end(), std::size_t{0});
  shards.start = std::accumulate(shards.rows.begin(), shards.rows.begin() + comm.rank(), std::size_t{0});
  return shards;
}

void fill_own(std::span<float> extended, const HaloPlan& plan, const Shards& shards, int rank, int round) {
  for (std::size_t i = 0; i < shards.rows[static_cast<std::size_t>(rank)]; ++i) {
    for (std::size_t e = 0; e < kElements; ++e) {
      extended[(plan.own_first_row() + i) * kElements + e] = value(round, shards.start + i, e);
    }
  }
}

/// Number of halo elements of `extended` that are not round `round`'s (periodic halos).
int wrong_halo(std::span<const float> extended, const HaloPlan& plan, const Shards& shards, int round) {
  int wrong = 0;
  for (std::size_t row = 0; row < plan.extended_rows(); ++row) {
    const auto total = static_cast<std::int64_t>(shards.total);
    const auto global =
        (static_cast<std::int64_t>(shards.start + row) - static_cast<std::int64_t>(plan.own_first_row()) + total) %
        total;
    for (std::size_t e = 0; e < kElements; ++e) {
      if (extended[row * kElements + e] != value(round, static_cast<std::size_t>(global), e)) ++wrong;
    }
  }
  return wrong;
}

TEST(MpiHaloRma, RepeatedExchangesIntoSharedBuffersNeverOverwriteUnreadRows) {
  auto& comm = mpi_world();
  if (comm.backend() != BackendKind::ucx) GTEST_SKIP() << "strategy rma runs on the ucx backend";
  const auto shards = shards_of(comm);
  auto plan = HaloPlan::create(comm, {.shard_rows = shards.rows, .left = 2, .right = 1, .row_elements = kElements,
                                      .periodic = true, .strategy = HaloStrategy::rma});
  // Two buffers exchanged at once through the one plan (keys and values), both mapped memory.
  auto keys = comm.allocate_shared(plan.extended_rows() * kElements * sizeof(float));
  auto values = comm.allocate_shared(plan.extended_rows() * kElements * sizeof(float));
  for (int round = 1; round <= 4; ++round) {
    for (auto* buffer : {&keys, &values}) fill_own(buffer->as<float>(), plan, shards, comm.rank(), round);
    auto key_halo = plan.start(keys.data());
    auto value_halo = plan.start(values.data());
    key_halo.wait();
    value_halo.wait();
    for (auto* buffer : {&keys, &values}) {
      ASSERT_EQ(wrong_halo(buffer->as<float>(), plan, shards, round), 0)
          << "round " << round << " rank " << comm.rank();
    }
    if (comm.rank() == 0) {
      // The neighbours start the next round now; until this rank starts it too, its halo rows
      // are still this round's (no credit for them exists yet).
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (auto* buffer : {&keys, &values}) {
        EXPECT_EQ(wrong_halo(buffer->as<float>(), plan, shards, round), 0)
            << "a neighbour overwrote rank 0's halo rows before it started round " << round + 1;
      }
    }
  }
}

TEST(MpiHaloRma, AdjointIntoSharedBuffersAddsEveryGradientOnce) {
  auto& comm = mpi_world();
  if (comm.backend() != BackendKind::ucx) GTEST_SKIP() << "strategy rma runs on the ucx backend";
  const auto shards = shards_of(comm);
  auto plan = HaloPlan::create(comm, {.shard_rows = shards.rows, .left = 3, .right = 2, .row_elements = kElements,
                                      .strategy = HaloStrategy::rma});
  auto gradient = comm.allocate_shared(plan.extended_rows() * kElements * sizeof(float));
  auto g = gradient.as<float>();
  for (int round = 0; round < 3; ++round) {
    // Every extended row holds 1 + round; an own row ends with one term per copy of it held.
    std::fill(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(plan.extended_rows() * kElements),
              static_cast<float>(1 + round));
    plan.start_adjoint(gradient.data()).wait();
    const std::size_t own = shards.rows[static_cast<std::size_t>(comm.rank())];
    for (std::size_t i = 0; i < own; ++i) {
      const std::size_t global = shards.start + i;
      // Every other rank whose halo holds row `global` sends its copy back once: left halos
      // cover the 3 rows before a shard, right halos the 2 after it (not periodic: clipped).
      int copies = 0;
      std::size_t first = 0;
      for (std::size_t rank = 0; rank < shards.rows.size(); ++rank) {
        const std::size_t end = first + shards.rows[rank];
        if (rank != static_cast<std::size_t>(comm.rank())) {
          copies += global < first && first - global <= 3 ? 1 : 0;
          copies += global >= end && global - end < 2 ? 1 : 0;
        }
        first = end;
      }
      for (std::size_t e = 0; e < kElements; ++e) {
        ASSERT_EQ(g[(plan.own_first_row() + i) * kElements + e], static_cast<float>((1 + round) * (1 + copies)))
            << "row " << global << " round " << round << " rank " << comm.rank();
      }
    }
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MpiHaloRma, DescribeSaysWhichWayEachStartMovedItsRows) {
  auto& comm = mpi_world();
  if (comm.backend() != BackendKind::ucx) GTEST_SKIP() << "strategy rma runs on the ucx backend";
  const auto shards = shards_of(comm);
  auto plan = HaloPlan::create(comm, {.shard_rows = shards.rows, .left = 2, .right = 1, .row_elements = kElements,
                                      .periodic = true, .strategy = HaloStrategy::rma});
  auto shared = comm.allocate_shared(plan.extended_rows() * kElements * sizeof(float));
  std::vector<float> plain(plan.extended_rows() * kElements);
  fill_own(shared.as<float>(), plan, shards, comm.rank(), 1);
  plan.start(shared.data()).wait();
  fill_own(plain, plan, shards, comm.rank(), 2);
  plan.start(plain.data()).wait();
  EXPECT_EQ(wrong_halo(plain, plan, shards, 2), 0);  // the inbox path is exact too
  plan.start_adjoint(shared.data()).wait();
  plan.start_adjoint(plain.data()).wait();
  const std::string text = plan.describe();
  EXPECT_TRUE(contains(text, "strategy rma on the ucx backend")) << text;
  EXPECT_TRUE(contains(text, "forward starts so far: 1 with the halo rows put straight")) << text;
  EXPECT_TRUE(contains(text, "1 through the plan's mapped inbox")) << text;
  EXPECT_TRUE(contains(text, "a buffer not from allocate_shared")) << text;
  EXPECT_TRUE(contains(text, "adjoint starts so far: 1 with the gradients offered")) << text;
  EXPECT_TRUE(contains(text, "1 with them put into the owners' inboxes")) << text;
}

TEST(MpiHaloRma, OtherBackendsRefuseItByName) {
  auto& comm = mpi_world();
  if (comm.backend() == BackendKind::ucx) GTEST_SKIP() << "the ucx backend runs strategy rma";
  try {
    (void)HaloPlan::create(comm, {.shard_rows = std::vector<std::size_t>(comm.size(), 4), .left = 1,
                                  .strategy = HaloStrategy::rma});
    ADD_FAILURE() << "strategy rma accepted on " << to_string(comm.backend());
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(error.what()).find("ucx backend"), std::string::npos) << error.what();
  }
  comm.barrier();  // still usable
}

TEST(MpiHaloRma, DescribeNamesStrategyBackendPeersAndBytes) {
  auto& comm = mpi_world();
  const auto plan = HaloPlan::create(comm, {.shard_rows = std::vector<std::size_t>(comm.size(), 4), .left = 1,
                                            .row_elements = kElements, .strategy = HaloStrategy::p2p});
  const std::string text = plan.describe();
  EXPECT_TRUE(contains(text, fmt::format("rank {} of {}: strategy p2p on the {} backend", comm.rank(), comm.size(),
                                         to_string(comm.backend()))))
      << text;
  // Not periodic: the last rank sends to no one, the others one row to the right neighbour.
  const bool last = comm.rank() + 1 == comm.size();
  EXPECT_TRUE(contains(text, fmt::format("sends to {} peer(s), {} B", last ? 0 : 1, last ? 0 : kElements * 4))) << text;
  EXPECT_FALSE(contains(text, "starts so far")) << text;  // only rma chooses a path per start
}

}  // namespace
}  // namespace meshcomm::testing
