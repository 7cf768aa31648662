#include "ring_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "attention/reference_attention.hpp"
#include "attention/ring_attention.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {

void check_ring_pipeline(Communicator& comm, RingDirection direction) {
  const int size = comm.size();
  const int rank = comm.rank();
  auto ring = RingPipeline::create(comm, {.block_bytes = 3 * sizeof(std::int32_t), .direction = direction});
  auto* block = reinterpret_cast<std::int32_t*>(ring.current().data());
  block[0] = rank;
  block[1] = rank * 10;
  block[2] = -rank;
  for (int step = 0; step < size; ++step) {
    const int from = direction == RingDirection::forward ? (rank - step + size) % size : (rank + step) % size;
    const auto* held = reinterpret_cast<const std::int32_t*>(ring.current().data());
    EXPECT_EQ(held[0], from) << "step " << step;
    EXPECT_EQ(held[1], from * 10);
    EXPECT_EQ(held[2], -from);
    if (step + 1 == size) break;
    auto transfer = ring.start();
    if (step == 0) {
      EXPECT_THROW((void)ring.start(), Error) << "a second transfer before advance";
    }
    transfer.wait();
    ring.advance();
  }
  comm.barrier();
}

void run_host_ring_attention(Communicator& comm, RingAttentionCase& problem) {
  const auto& shape = problem.shape;
  std::vector<float> lse(shape.rows * shape.heads);
  layers::ring_attention_forward(comm, problem.queries.data(), problem.keys.data(), problem.values.data(),
                                 problem.positions.data(), problem.out.data(), lse.data(), shape);
  layers::ring_attention_backward(comm, problem.queries.data(), problem.keys.data(), problem.values.data(),
                                  problem.positions.data(), problem.out.data(), lse.data(), problem.d_out.data(),
                                  problem.d_queries.data(), problem.d_keys.data(), problem.d_values.data(), shape);
}

void run_host_ring_attention_twice(Communicator& comm, RingAttentionCase& problem) {
  const auto& shape = problem.shape;
  std::vector<float> lse(shape.rows * shape.heads);
  layers::RingAttention<float> ring(comm, shape);
  for (int run = 0; run < 2; ++run) {
    ring.forward(problem.queries.data(), problem.keys.data(), problem.values.data(), problem.positions.data(),
                 problem.out.data(), lse.data());
    ring.backward(problem.queries.data(), problem.keys.data(), problem.values.data(), problem.positions.data(),
                  problem.out.data(), lse.data(), problem.d_out.data(), problem.d_queries.data(),
                  problem.d_keys.data(), problem.d_values.data());
  }
}

double check_ring_attention(Communicator& comm, layers::SequenceLayout layout, bool causal, const RingAttentionRun& run,
                            double tolerance, std::size_t sequence_per_rank, std::size_t heads, std::size_t head_dim) {
  const int size = comm.size();
  const std::size_t sequence = sequence_per_rank * static_cast<std::size_t>(size);
  const std::size_t row = heads * head_dim;
  std::mt19937 random(7);  // the same tensors on every rank
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> q(sequence * row), k(sequence * row), v(sequence * row), d_out(sequence * row);
  for (auto* tensor : {&q, &k, &v, &d_out}) {
    for (auto& value : *tensor) value = normal(random);
  }
  const auto reference = layers::reference_attention(q, k, v, d_out, sequence, heads, head_dim, causal);

  RingAttentionCase problem;
  problem.positions = layers::layout_positions(layout, sequence, size, comm.rank());
  const auto& positions = problem.positions;
  const std::size_t rows = positions.size();
  problem.shape = {rows, heads, head_dim, causal};
  problem.queries = layers::reorder_rows(q, row, positions);
  problem.keys = layers::reorder_rows(k, row, positions);
  problem.values = layers::reorder_rows(v, row, positions);
  problem.d_out = layers::reorder_rows(d_out, row, positions);
  for (auto* output : {&problem.out, &problem.d_queries, &problem.d_keys, &problem.d_values}) {
    output->assign(rows * row, 0.0F);
  }
  run(comm, problem);
  double worst = 0;
  auto compare = [&](const std::vector<float>& local, const std::vector<float>& whole, const char* what) {
    const auto expected = layers::reorder_rows(whole, row, positions);
    double scale = 0;
    for (float value : whole) scale = std::max(scale, static_cast<double>(std::abs(value)));
    double error = 0;
    for (std::size_t i = 0; i < local.size(); ++i) {
      EXPECT_FALSE(std::isnan(local[i])) << what;
      error = std::max(error, std::abs(static_cast<double>(local[i]) - expected[i]) / std::max(scale, 1e-30));
    }
    EXPECT_LE(error, tolerance) << what << " " << to_string(layout) << (causal ? " causal" : "") << " P=" << size;
    worst = std::max(worst, error);
  };
  compare(problem.out, reference.out, "out");
  compare(problem.d_queries, reference.d_queries, "dQ");
  compare(problem.d_keys, reference.d_keys, "dK");
  compare(problem.d_values, reference.d_values, "dV");
  return worst;
}

}  // namespace meshcomm::testing
