// all_gather_perf: every rank contributes `count` elements; busbw = algbw × (n-1)/n.

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class AllGather final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "all_gather"; }
  PerfCounts counts(std::size_t count, int ranks, int rank) const override {
    const std::size_t per_rank = count / ranks;
    return {.send = per_rank, .recv = per_rank * ranks, .in_place_send_offset = rank * per_rank,
            .in_place_recv_offset = 0, .reported = per_rank};
  }
  double bus_factor(int ranks) const override { return (ranks - 1.0) / ranks; }
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    verifiable::fill_payload(send, 0, counts.send, settings.type, comm.rank(), 0);
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    std::size_t wrong = 0;
    for (int from = 0; from < comm.size(); ++from) {
      wrong += verifiable::count_wrong(recv, from * counts.send, counts.send, settings.type,
                                       [&](std::size_t i) { return verifiable::payload(from, 0, i); });
    }
    return wrong;
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    return comm.all_gather(ConstBufferView(send, counts.send, settings.type, settings.memory),
                           BufferView(recv, counts.recv, settings.type, settings.memory), {.algorithm = settings.algorithm, .stream = settings.stream});
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Allgather", "MPI_Iallgather"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int bytes = mpi_count(counts.send * size_of(settings.type));
    mpi.run([&] { return MPI_Allgather(mpi.send, bytes, MPI_BYTE, mpi.recv, bytes, MPI_BYTE, mpi.comm); },
            [&](MPI_Request* request) {
              return MPI_Iallgather(mpi.send, bytes, MPI_BYTE, mpi.recv, bytes, MPI_BYTE, mpi.comm, request);
            });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::AllGather{}); }
