// reduce_scatter_perf: `count` elements per rank out of n×count in; busbw = algbw × (n-1)/n.

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class ReduceScatter final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "reduce_scatter"; }
  bool reduces() const noexcept override { return true; }
  PerfCounts counts(std::size_t count, int ranks, int rank) const override {
    const std::size_t per_rank = count / ranks;
    return {.send = per_rank * ranks, .recv = per_rank, .in_place_send_offset = 0,
            .in_place_recv_offset = rank * per_rank, .reported = per_rank};
  }
  double bus_factor(int ranks) const override { return (ranks - 1.0) / ranks; }
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    verifiable::fill_contributions(send, counts.send, settings.type, settings.op, comm.rank(), comm.size());
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    return verifiable::count_wrong(recv, 0, counts.recv, settings.type, [&](std::size_t i) {
      return verifiable::reduced(settings.op, comm.rank() * counts.recv + i, comm.size());
    });
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    return comm.reduce_scatter(ConstBufferView(send, counts.send, settings.type, settings.memory),
                               BufferView(recv, counts.recv, settings.type, settings.memory),
                               {.op = settings.op, .algorithm = settings.algorithm, .stream = settings.stream});
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int count = mpi_count(counts.recv);
    const MPI_Op op = detail::mpi_op(settings.op);
    mpi.run([&] { return MPI_Reduce_scatter_block(mpi.send, mpi.recv, count, mpi.element, op, mpi.comm); },
            [&](MPI_Request* request) {
              return MPI_Ireduce_scatter_block(mpi.send, mpi.recv, count, mpi.element, op, mpi.comm, request);
            });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::ReduceScatter{}); }
