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

double check_ring_attention(Communicator& comm, layers::SequenceLayout layout, bool causal) {
  const int size = comm.size();
  const std::size_t sequence = 6 * static_cast<std::size_t>(size);
  const std::size_t heads = 2;
  const std::size_t dim = 8;
  const std::size_t row = heads * dim;
  std::mt19937 random(7);  // the same tensors on every rank
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> q(sequence * row), k(sequence * row), v(sequence * row), d_out(sequence * row);
  for (auto* tensor : {&q, &k, &v, &d_out}) {
    for (auto& value : *tensor) value = normal(random);
  }
  const auto reference = layers::reference_attention(q, k, v, d_out, sequence, heads, dim, causal);

  const auto positions = layers::layout_positions(layout, sequence, size, comm.rank());
  const std::size_t rows = positions.size();
  const auto my_q = layers::reorder_rows(q, row, positions);
  const auto my_k = layers::reorder_rows(k, row, positions);
  const auto my_v = layers::reorder_rows(v, row, positions);
  const auto my_d_out = layers::reorder_rows(d_out, row, positions);
  std::vector<float> out(rows * row), lse(rows * heads), d_q(rows * row), d_k(rows * row), d_v(rows * row);
  const layers::RingAttentionShape shape{rows, heads, dim, causal};
  layers::ring_attention_forward(comm, my_q.data(), my_k.data(), my_v.data(), positions.data(), out.data(), lse.data(),
                                 shape);
  layers::ring_attention_backward(comm, my_q.data(), my_k.data(), my_v.data(), positions.data(), out.data(),
                                  lse.data(), my_d_out.data(), d_q.data(), d_k.data(), d_v.data(), shape);
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
    EXPECT_LE(error, 1e-5) << what << " " << to_string(layout) << (causal ? " causal" : "") << " P=" << size;
    worst = std::max(worst, error);
  };
  compare(out, reference.out, "out");
  compare(d_q, reference.d_queries, "dQ");
  compare(d_k, reference.d_keys, "dK");
  compare(d_v, reference.d_values, "dV");
  return worst;
}

}  // namespace meshcomm::testing
