// alltoall_perf: `count` elements per rank, one block to each peer; busbw = algbw × (n-1)/n.

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class AllToAll final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "alltoall"; }
  PerfCounts counts(std::size_t count, int ranks, int) const override {
    const std::size_t total = count / ranks * ranks;
    return {.send = total, .recv = total, .reported = total / ranks};
  }
  double bus_factor(int ranks) const override { return (ranks - 1.0) / ranks; }
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    const std::size_t block = counts.send / comm.size();
    for (int to = 0; to < comm.size(); ++to) {
      verifiable::fill_payload(send, to * block, block, settings.type, comm.rank(), to);
    }
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    const std::size_t block = counts.recv / comm.size();
    std::size_t wrong = 0;
    for (int from = 0; from < comm.size(); ++from) {
      wrong += verifiable::count_wrong(recv, from * block, block, settings.type,
                                       [&](std::size_t k) { return verifiable::payload(from, comm.rank(), k); });
    }
    return wrong;
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    return comm.all_to_all(ConstBufferView(send, counts.send, settings.type, settings.memory),
                           BufferView(recv, counts.recv, settings.type, settings.memory), {.algorithm = settings.algorithm, .stream = settings.stream});
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Alltoall", "MPI_Ialltoall"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int ranks = mpi.size();
    const int block = mpi_count(counts.send / ranks * size_of(settings.type));
    mpi.run([&] { return MPI_Alltoall(mpi.send, block, MPI_BYTE, mpi.recv, block, MPI_BYTE, mpi.comm); },
            [&](MPI_Request* request) {
              return MPI_Ialltoall(mpi.send, block, MPI_BYTE, mpi.recv, block, MPI_BYTE, mpi.comm, request);
            });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::AllToAll{}); }
