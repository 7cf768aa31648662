// broadcast_perf: `count` elements from the root (-r) to every rank; busbw = algbw.

#include <cstring>

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class Broadcast final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "broadcast"; }
  bool has_root() const noexcept override { return true; }
  bool sends(int rank, const PerfSettings& settings) const override { return rank == settings.root; }
  PerfCounts counts(std::size_t count, int, int) const override {
    return {.send = count, .recv = count, .reported = count};
  }
  double bus_factor(int) const override { return 1.0; }
  void fill(void* send, void* recv, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    verifiable::fill(send, 0, counts.send, settings.type, [&](std::size_t i) {
      return comm.rank() == settings.root ? verifiable::payload(settings.root, 0, i) : 98.0;
    });
    if (recv != send) verifiable::fill(recv, 0, counts.recv, settings.type, [](std::size_t) { return 98.0; });
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator&) const override {
    return verifiable::count_wrong(recv, 0, counts.recv, settings.type,
                                   [&](std::size_t i) { return verifiable::payload(settings.root, 0, i); });
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    // meshcomm's broadcast works in place; out of place, the root first copies its input over.
    if (send != recv && comm.rank() == settings.root) std::memcpy(recv, send, counts.send * size_of(settings.type));
    return comm.broadcast(BufferView(recv, counts.recv, settings.type, settings.memory),
                          {.root = settings.root, .algorithm = settings.algorithm, .stream = settings.stream});
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Bcast", "MPI_Ibcast"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    // As start(): out of place, the root first copies its input over.
    const std::size_t bytes = counts.send * size_of(settings.type);
    if (!mpi.in_place && mpi.rank() == settings.root) std::memcpy(mpi.recv, mpi.send, bytes);
    mpi.run([&] { return MPI_Bcast(mpi.recv, mpi_count(bytes), MPI_BYTE, settings.root, mpi.comm); },
            [&](MPI_Request* request) {
              return MPI_Ibcast(mpi.recv, mpi_count(bytes), MPI_BYTE, settings.root, mpi.comm, request);
            });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::Broadcast{}); }
