#include "direct_calls.hpp"

#include <fmt/format.h>

#include <chrono>
#include <functional>

#include "tensor_buffers.hpp"

namespace meshcomm::torch_plugin {

namespace {

constexpr const char* kCall = "time_direct_calls";

std::function<Work(Communicator&)> direct_call(const std::string& operation, BufferView source, BufferView target) {
  if (operation == "all_reduce") return [source](Communicator& comm) { return comm.all_reduce(source, source); };
  if (operation == "broadcast") return [source](Communicator& comm) { return comm.broadcast(source); };
  if (operation == "all_gather") {
    return [source, target](Communicator& comm) { return comm.all_gather(source, target); };
  }
  if (operation == "reduce_scatter") {
    return [source, target](Communicator& comm) { return comm.reduce_scatter(source, target); };
  }
  if (operation == "all_to_all") {
    return [source, target](Communicator& comm) { return comm.all_to_all(source, target); };
  }
  throw invalid_call(kCall, fmt::format("operation '{}' is not one of all_reduce, all_gather, reduce_scatter, "
                                        "all_to_all, broadcast",
                                        operation));
}

}  // namespace

double time_direct_calls(ProcessGroupMeshcomm& group, const std::string& operation, const at::Tensor& source,
                         const at::Tensor& target, int iterations) {
  if (iterations < 1) throw invalid_call(kCall, fmt::format("iterations is {}; give 1 or more", iterations));
  const auto call = direct_call(operation, buffer_of(source, kCall, "source"), buffer_of(target, kCall, "target"));
  double seconds = 0;
  group.run_exclusively([&](Communicator& comm) {
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) call(comm).wait();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  });
  return seconds;
}

}  // namespace meshcomm::torch_plugin
