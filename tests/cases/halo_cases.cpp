#include "halo_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "attention/sliding_window_attention.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/head_transpose.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::testing {

namespace {

std::vector<std::size_t> uneven_rows(int size) {
  std::vector<std::size_t> rows;
  for (int rank = 0; rank < size; ++rank) rows.push_back(5 + static_cast<std::size_t>(rank * 3 % 5));
  return rows;
}

std::size_t start_of(const std::vector<std::size_t>& rows, int rank) {
  return std::accumulate(rows.begin(), rows.begin() + rank, std::size_t{0});
}

double sum_over_ranks(Communicator& comm, double value) {
  double total = 0;
  comm.all_reduce(ConstBufferView(&value, 1, DataType::f64), BufferView(&total, 1, DataType::f64)).wait();
  return total;
}

/// Runs `plan`'s forward (or adjoint) exchange on `data`: in place on the host, or on a device
/// copy when `memory` is cuda, brought back afterwards.
template <class T>
void exchange(HaloPlan& plan, std::vector<T>& data, MemoryKind memory, bool adjoint = false) {
  void* target = data.data();
  std::shared_ptr<std::byte> device;
  const std::size_t bytes = data.size() * sizeof(T);
  if (memory == MemoryKind::cuda) {
    device = verifiable::device_bytes(bytes);
    verifiable::copy_to_device(device.get(), data.data(), bytes);
    target = device.get();
  }
  (adjoint ? plan.start_adjoint(target) : plan.start(target)).wait();
  if (memory == MemoryKind::cuda) verifiable::copy_to_host(data.data(), device.get(), bytes);
}

}  // namespace

std::vector<HaloStrategy> halo_strategies(const Communicator& comm) {
  std::vector<HaloStrategy> strategies{HaloStrategy::p2p, HaloStrategy::neighbor_alltoallv};
  if (comm.backend() == BackendKind::mpi) strategies.push_back(HaloStrategy::mpi_neighbor);
  if (comm.backend() == BackendKind::ucx) strategies.push_back(HaloStrategy::rma);
  return strategies;
}

void check_halo_contents(Communicator& comm, HaloStrategy strategy, MemoryKind memory) {
  const auto rows = uneven_rows(comm.size());
  const std::size_t total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
  const std::size_t smallest = *std::min_element(rows.begin(), rows.end());
  const std::size_t largest = *std::max_element(rows.begin(), rows.end());
  const std::size_t own = rows[comm.rank()];
  const std::size_t start = start_of(rows, comm.rank());
  constexpr std::size_t kElements = 3;
  for (std::size_t left : {std::size_t{0}, std::size_t{1}, smallest - 1, std::min(total, largest + 3)}) {
    for (std::size_t right : {std::size_t{0}, std::size_t{1}, std::min(total, 2 * largest + 1)}) {
      for (bool periodic : {false, true}) {
        for (std::size_t stride : {kElements, kElements + 2}) {
          const std::string what = "left " + std::to_string(left) + " right " + std::to_string(right) +
                                   (periodic ? " periodic" : "") + " stride " + std::to_string(stride) + " " +
                                   std::string(to_string(strategy)) + " rank " + std::to_string(comm.rank());
          auto plan = HaloPlan::create(comm, {.shard_rows = rows,
                                              .left = static_cast<std::int64_t>(left),
                                              .right = static_cast<std::int64_t>(right),
                                              .row_elements = kElements,
                                              .type = DataType::f32,
                                              .row_stride = stride,
                                              .periodic = periodic,
                                              .strategy = strategy,
                                              .memory = memory});
          ASSERT_EQ(plan.extended_rows(), left + own + right);
          std::vector<float> extended(plan.extended_rows() * stride, -7.0F);
          auto value = [](std::size_t global, std::size_t e) { return static_cast<float>(global * 10 + e + 1); };
          for (std::size_t row = 0; row < plan.extended_rows(); ++row) {
            for (std::size_t e = 0; e < kElements; ++e) extended[row * stride + e] = -1.0F;
          }
          for (std::size_t i = 0; i < own; ++i) {
            for (std::size_t e = 0; e < kElements; ++e) extended[(left + i) * stride + e] = value(start + i, e);
          }
          exchange(plan, extended, memory);
          int wrong = 0;
          for (std::size_t row = 0; row < plan.extended_rows(); ++row) {
            const auto global = static_cast<std::int64_t>(start + row) - static_cast<std::int64_t>(left);
            const bool outside = global < 0 || global >= static_cast<std::int64_t>(total);
            const auto wrapped = static_cast<std::size_t>((global % static_cast<std::int64_t>(total) +
                                                           static_cast<std::int64_t>(total)) %
                                                          static_cast<std::int64_t>(total));
            for (std::size_t e = 0; e < stride; ++e) {
              float expected = -7.0F;  // padding is never touched
              if (e < kElements) expected = outside && !periodic ? -1.0F : value(wrapped, e);
              if (extended[row * stride + e] != expected && ++wrong <= 3) {
                ADD_FAILURE() << what << ": extended row " << row << " element " << e << " is "
                              << extended[row * stride + e] << ", expected " << expected;
              }
            }
          }
          if (wrong > 0) return;
        }
      }
    }
  }
}

void check_halo_adjoint(Communicator& comm, HaloStrategy strategy, MemoryKind memory) {
  const auto rows = uneven_rows(comm.size());
  const std::size_t total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
  const std::size_t own = rows[comm.rank()];
  constexpr std::size_t kElements = 2;
  std::mt19937 random(1234 + comm.rank());
  std::uniform_int_distribution<int> small(-3, 3);
  for (bool periodic : {false, true}) {
    for (std::size_t width : {std::size_t{1}, std::size_t{4}, std::min(total, std::size_t{13})}) {
      auto plan = HaloPlan::create(comm, {.shard_rows = rows, .left = static_cast<std::int64_t>(width),
                                          .right = static_cast<std::int64_t>(width / 2 + 1),
                                          .row_elements = kElements, .type = DataType::f64, .periodic = periodic,
                                          .strategy = strategy, .memory = memory});
      const std::size_t n = plan.extended_rows() * kElements;
      const std::size_t first = plan.own_first_row() * kElements;
      std::vector<double> x(n, 0.0);
      std::vector<double> y(n);
      for (std::size_t i = first; i < first + own * kElements; ++i) x[i] = small(random);
      for (auto& value : y) value = small(random);
      const std::vector<double> x_own(x.begin() + static_cast<std::ptrdiff_t>(first),
                                      x.begin() + static_cast<std::ptrdiff_t>(first + own * kElements));
      exchange(plan, x, memory);
      double forward = 0;
      for (std::size_t i = 0; i < n; ++i) forward += x[i] * y[i];
      exchange(plan, y, memory, true);
      double adjoint = 0;
      for (std::size_t i = 0; i < own * kElements; ++i) adjoint += x_own[i] * y[first + i];
      EXPECT_EQ(sum_over_ranks(comm, forward), sum_over_ranks(comm, adjoint))
          << "width " << width << (periodic ? " periodic " : " ") << to_string(strategy);
    }
  }
}

void check_halo_graph(Communicator& comm, HaloStrategy strategy, MemoryKind memory) {
  const int size = comm.size();
  const int rank = comm.rank();
  if (size < 2) return;
  const std::size_t own = 4;
  HaloGraphSpec spec{.own_rows = own, .row_elements = 2, .type = DataType::i32, .strategy = strategy, .memory = memory};
  spec.send_peers.push_back((rank + 1) % size);
  spec.send_rows.push_back({0, own - 1});
  spec.recv_peers.push_back((rank - 1 + size) % size);
  spec.recv_rows.push_back(2);
  if (size >= 3) {
    spec.send_peers.push_back((rank + 2) % size);
    spec.send_rows.push_back({2});
    spec.recv_peers.push_back((rank - 2 + size) % size);
    spec.recv_rows.push_back(1);
  }
  auto plan = HaloPlan::create(comm, spec);
  std::vector<std::int32_t> extended(plan.extended_rows() * 2, -1);
  for (std::size_t row = 0; row < own; ++row) {
    for (std::size_t e = 0; e < 2; ++e) extended[row * 2 + e] = rank * 100 + static_cast<int>(row * 2 + e);
  }
  exchange(plan, extended, memory);
  const int left = (rank - 1 + size) % size;
  auto expect_row = [&](std::size_t at, int owner, std::size_t owner_row) {
    for (std::size_t e = 0; e < 2; ++e) {
      EXPECT_EQ(extended[at * 2 + e], owner * 100 + static_cast<int>(owner_row * 2 + e))
          << "row " << at << " on rank " << rank << " " << to_string(strategy);
    }
  };
  expect_row(own, left, 0);
  expect_row(own + 1, left, own - 1);
  if (size >= 3) expect_row(own + 2, (rank - 2 + size) % size, 2);
}

void check_halo_errors(Communicator& comm) {
  const auto rows = uneven_rows(comm.size());
  const std::size_t total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
  auto expect_message = [&](const HaloSpec& spec, const std::string& fragment) {
    try {
      (void)HaloPlan::create(comm, spec);
      ADD_FAILURE() << "accepted a spec that should fail with '" << fragment << "'";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  expect_message({.shard_rows = rows, .left = -2}, "left = -2 is negative");
  expect_message({.shard_rows = rows, .right = static_cast<std::int64_t>(total + 1)},
                 "right = " + std::to_string(total + 1) + " is beyond the whole sequence");
  expect_message({.shard_rows = std::vector<std::size_t>(comm.size() + 1, 2), .left = 1},
                 "shard_rows has " + std::to_string(comm.size() + 1) + " entries");
  expect_message({.shard_rows = rows, .row_elements = 0}, "row_elements = 0");
  if (comm.size() > 1) {
    // Ranks disagree on the left width: every rank learns which field differs.
    expect_message({.shard_rows = rows, .left = comm.rank() == 0 ? 1 : 2}, "left is");
  }
  comm.barrier();  // still usable
}

void check_head_transpose(Communicator& comm, MemoryKind memory) {
  const auto rows = uneven_rows(comm.size());
  const std::size_t total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
  const std::size_t heads = 2 * static_cast<std::size_t>(comm.size());
  const std::size_t dim = 3;
  const std::size_t own = rows[comm.rank()];
  const std::size_t start = start_of(rows, comm.rank());
  // Element (row, head, d) of the whole tensor, exactly representable.
  auto value = [&](std::size_t row, std::size_t head, std::size_t d) {
    return static_cast<float>((row * heads + head) * dim + d);
  };
  std::vector<float> shard(own * heads * dim);
  for (std::size_t r = 0; r < own; ++r) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t d = 0; d < dim; ++d) shard[(r * heads + h) * dim + d] = value(start + r, h, d);
    }
  }
  auto transpose = HeadTranspose::create(comm, {.shard_rows = rows, .heads = heads, .head_dim = dim, .memory = memory});
  const std::size_t local = transpose.local_heads();
  std::vector<float> head_sharded(total * local * dim, -1.0F), back(shard.size(), -1.0F);
  if (memory == MemoryKind::cuda) {
    const auto stream = verifiable::new_stream();
    const StreamRef ref(stream.get());
    auto device_shard = verifiable::device_bytes(shard.size() * sizeof(float));
    auto device_heads = verifiable::device_bytes(head_sharded.size() * sizeof(float));
    auto device_back = verifiable::device_bytes(back.size() * sizeof(float));
    verifiable::copy_to_device(device_shard.get(), shard.data(), shard.size() * sizeof(float));
    transpose.to_heads(device_shard.get(), device_heads.get(), ref).wait();
    transpose.to_sequence(device_heads.get(), device_back.get(), ref).wait();
    verifiable::synchronize_stream(stream.get());
    verifiable::copy_to_host(head_sharded.data(), device_heads.get(), head_sharded.size() * sizeof(float));
    verifiable::copy_to_host(back.data(), device_back.get(), back.size() * sizeof(float));
  } else {
    transpose.to_heads(shard.data(), head_sharded.data()).wait();
    transpose.to_sequence(head_sharded.data(), back.data()).wait();
  }
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < total; ++r) {
    for (std::size_t h = 0; h < local; ++h) {
      for (std::size_t d = 0; d < dim; ++d) {
        wrong += head_sharded[(r * local + h) * dim + d] != value(r, comm.rank() * local + h, d) ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(wrong, 0U) << "to_heads on " << to_string(memory) << ", rank " << comm.rank();
  EXPECT_EQ(back, shard) << "to_sequence on " << to_string(memory) << ", rank " << comm.rank();
}

void check_sliding_window_attention(Communicator& comm, HaloStrategy strategy) {
  const int size = comm.size();
  const auto rows = uneven_rows(size);
  const std::size_t total = std::accumulate(rows.begin(), rows.end(), std::size_t{0});
  const std::size_t own = rows[comm.rank()];
  const std::size_t start = start_of(rows, comm.rank());
  const std::size_t heads = 2 * static_cast<std::size_t>(size);
  const std::size_t dim = 4;
  const std::size_t row = heads * dim;
  std::mt19937 random(42);  // the same tensors on every rank
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::vector<float> q(total * row), k(total * row), v(total * row);
  for (auto* tensor : {&q, &k, &v}) {
    for (auto& value : *tensor) value = uniform(random);
  }
  // Every output is a convex combination of value rows, so fp32 rounding moves it by a few units
  // of the last place of the largest |value| (softmax over at most 7 keys, head_dim 4): 1e-5 of
  // that is a hundred times more, and a wrong or missing halo row moves outputs by a sizeable
  // fraction of it. The scale is the values' norm, never the output element, which can be near zero.
  float value_scale = 0;
  for (float value : v) value_scale = std::max(value_scale, std::abs(value));
  for (layers::AttentionWindow window : {layers::AttentionWindow{true, 5}, layers::AttentionWindow{false, 3}}) {
    std::vector<float> reference(total * row);
    layers::sliding_window_attention(q.data(), k.data(), v.data(), reference.data(),
                                     {.query_rows = total, .key_rows = total, .sequence_rows = total, .heads = heads,
                                      .head_dim = dim},
                                     window);
    auto close = [&](const float* got, std::size_t first_row, std::size_t count, const char* path) {
      int wrong = 0;
      for (std::size_t i = 0; i < count * row; ++i) {
        const float want = reference[first_row * row + i];
        if (std::abs(got[i] - want) > 1e-5F * value_scale && ++wrong <= 3) {
          ADD_FAILURE() << path << (window.causal ? " causal" : " symmetric") << " element " << i << ": " << got[i]
                        << " vs " << want << " (rank " << comm.rank() << ")";
        }
      }
    };
    // Sequence sharding with halos: keys and values extended by the window.
    const std::size_t left = window.causal ? window.size - 1 : window.size;
    const std::size_t right = window.causal ? 0 : window.size;
    auto plan = HaloPlan::create(comm, {.shard_rows = rows, .left = static_cast<std::int64_t>(left),
                                        .right = static_cast<std::int64_t>(right), .row_elements = row,
                                        .strategy = strategy});
    std::vector<float> keys(plan.extended_rows() * row), values(plan.extended_rows() * row);
    std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(start * row), own * row, keys.begin() + static_cast<std::ptrdiff_t>(left * row));
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(start * row), own * row, values.begin() + static_cast<std::ptrdiff_t>(left * row));
    auto key_halo = plan.start(keys.data());
    auto value_halo = plan.start(values.data());
    key_halo.wait();
    value_halo.wait();
    std::vector<float> out(own * row);
    layers::sliding_window_attention(q.data() + start * row, keys.data(), values.data(), out.data(),
                                     {.query_rows = own,
                                      .query_offset = static_cast<std::int64_t>(start),
                                      .key_rows = plan.extended_rows(),
                                      .key_offset = static_cast<std::int64_t>(start) - static_cast<std::int64_t>(left),
                                      .sequence_rows = total,
                                      .heads = heads,
                                      .head_dim = dim},
                                     window);
    close(out.data(), start, own, "halo");
    // Head sharding: transpose to [all rows, heads / size], attend, transpose back.
    auto transpose = HeadTranspose::create(comm, {.shard_rows = rows, .heads = heads, .head_dim = dim});
    const std::size_t local = transpose.local_heads() * dim;
    std::vector<float> q_heads(total * local), k_heads(total * local), v_heads(total * local), o_heads(total * local);
    transpose.to_heads(q.data() + start * row, q_heads.data()).wait();
    transpose.to_heads(k.data() + start * row, k_heads.data()).wait();
    transpose.to_heads(v.data() + start * row, v_heads.data()).wait();
    layers::sliding_window_attention(q_heads.data(), k_heads.data(), v_heads.data(), o_heads.data(),
                                     {.query_rows = total, .key_rows = total, .sequence_rows = total,
                                      .heads = transpose.local_heads(), .head_dim = dim},
                                     window);
    std::vector<float> back(own * row);
    transpose.to_sequence(o_heads.data(), back.data()).wait();
    close(back.data(), start, own, "heads");
  }
}

}  // namespace meshcomm::testing
