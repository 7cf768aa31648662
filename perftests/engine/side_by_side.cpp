#include "side_by_side.hpp"

#include <algorithm>
#include <chrono>

#include "turn_order.hpp"

namespace meshcomm::perf {

double reduce_over_ranks(Communicator& comm, double value, ReduceOp op) {
  double result = 0;
  comm.all_reduce(ConstBufferView(&value, 1, DataType::f64), BufferView(&result, 1, DataType::f64), {.op = op}).wait();
  return result;
}

double host_seconds(const std::function<void()>& run) {
  const auto started = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::vector<double> time_side_by_side(Communicator& comm, const TimingPlan& plan,
                                      const std::vector<std::function<void()>>& bodies, const Timer& timer) {
  for (const auto& body : bodies) {
    for (int i = 0; i < plan.warmup; ++i) body();
  }
  std::vector<std::vector<double>> samples(bodies.size());
  const std::uint64_t seed = shared_turn_seed(comm);
  for (int repeat = 0; repeat < plan.repeats; ++repeat) {
    for (const std::size_t b : turn_order(seed, repeat, bodies.size())) {
      comm.barrier();
      double seconds = timer([&] {
                         for (int i = 0; i < plan.iterations; ++i) bodies[b]();
                       }) /
                       plan.iterations;
      double slowest = 0;
      comm.all_reduce(ConstBufferView(&seconds, 1, DataType::f64), BufferView(&slowest, 1, DataType::f64),
                      {.op = ReduceOp::max})
          .wait();
      samples[b].push_back(slowest);
    }
  }
  std::vector<double> medians;
  for (auto& times : samples) {
    std::sort(times.begin(), times.end());
    medians.push_back(times[times.size() / 2]);
  }
  return medians;
}

}  // namespace meshcomm::perf
