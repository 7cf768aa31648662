// bandwidth_perf: ranks in pairs (0-1, 2-3, ...); the even rank sends `count` elements, the odd
// rank receives them: a one-way stream of messages, as ucx_perftest -t tag_bw times it, where
// pingpong_perf times round trips. Each rank waits for its message before it starts the next, so
// one large message is in flight at a time (osu_bw keeps a window of 64); a small one completes
// on its sender as soon as the transport has taken it, and the sender runs ahead. The time is
// the receiver's (the slowest rank's, by default) per message; busbw = algbw.

#include "engine/point_to_point_operation.hpp"
#include "engine/rank_pairs.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class Bandwidth final : public PointToPointOperation {
 public:
  std::string_view name() const noexcept override { return "bandwidth"; }
  double bus_factor(int) const override { return 1.0; }
  void check_ranks(const Communicator& comm) const override { require_pairs(comm, "bandwidth_perf"); }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    if (sends(comm)) return 0;
    return verifiable::count_wrong(recv, 0, counts.recv, settings.type,
                                   [&](std::size_t i) { return verifiable::payload(partner(comm), 0, i); });
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    if (sends(comm)) {
      return comm.isend(ConstBufferView(send, counts.send, settings.type, settings.memory), partner(comm), 0,
                        settings.stream);
    }
    return comm.irecv(BufferView(recv, counts.recv, settings.type, settings.memory), partner(comm), 0, settings.stream);
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Send / MPI_Recv", "MPI_Isend / MPI_Irecv"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int other = mpi.rank() ^ 1;
    const bool sender = mpi.rank() % 2 == 0;
    const int bytes = mpi_count(counts.send * size_of(settings.type));
    mpi.run(
        [&] {
          return sender ? MPI_Send(mpi.send, bytes, MPI_BYTE, other, 0, mpi.comm)
                        : MPI_Recv(mpi.recv, bytes, MPI_BYTE, other, 0, mpi.comm, MPI_STATUS_IGNORE);
        },
        [&](MPI_Request* request) {
          return sender ? MPI_Isend(mpi.send, bytes, MPI_BYTE, other, 0, mpi.comm, request)
                        : MPI_Irecv(mpi.recv, bytes, MPI_BYTE, other, 0, mpi.comm, request);
        });
  }

 private:
  static bool sends(const Communicator& comm) { return comm.rank() % 2 == 0; }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::Bandwidth{}); }
