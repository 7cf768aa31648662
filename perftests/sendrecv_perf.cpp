// sendrecv_perf: each rank sends `count` elements to rank+1 and receives from rank-1 (one ring
// step); busbw = algbw. Out of place only: one buffer cannot be sent and received at once.

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class SendRecv final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "sendrecv"; }
  bool has_in_place() const noexcept override { return false; }
  PerfCounts counts(std::size_t count, int, int) const override {
    return {.send = count, .recv = count, .reported = count};
  }
  double bus_factor(int) const override { return 1.0; }
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    verifiable::fill_payload(send, 0, counts.send, settings.type, comm.rank(), 0);
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    const int left = (comm.rank() + comm.size() - 1) % comm.size();
    return verifiable::count_wrong(recv, 0, counts.recv, settings.type,
                                   [&](std::size_t i) { return verifiable::payload(left, 0, i); });
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    const int left = (comm.rank() + comm.size() - 1) % comm.size();
    const int right = (comm.rank() + 1) % comm.size();
    auto receive = comm.irecv(BufferView(recv, counts.recv, settings.type, settings.memory), left, 0, settings.stream);
    comm.isend(ConstBufferView(send, counts.send, settings.type, settings.memory), right, 0, settings.stream).wait();
    return receive;
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::SendRecv{}); }
