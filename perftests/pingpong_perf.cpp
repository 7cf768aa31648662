// pingpong_perf: ranks in pairs (0-1, 2-3, ...); the even rank sends `count` elements, the odd
// rank receives them and sends its own back. The time is the round trip: half of it is the
// latency that ucx_perftest -t tag_lat and osu_latency report; busbw counts both messages. As
// theirs, each rank posts a receive only once its send is done, so that posting it happens
// while the message is on its way rather than on the round trip's path.

#include "engine/point_to_point_operation.hpp"
#include "engine/rank_pairs.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class PingPong final : public PointToPointOperation {
 public:
  std::string_view name() const noexcept override { return "pingpong"; }
  double bus_factor(int) const override { return 2.0; }
  void check_ranks(const Communicator& comm) const override { require_pairs(comm, "pingpong_perf"); }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    return verifiable::count_wrong(recv, 0, counts.recv, settings.type,
                                   [&](std::size_t i) { return verifiable::payload(partner(comm), 0, i); });
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    const ConstBufferView outgoing(send, counts.send, settings.type, settings.memory);
    const BufferView incoming(recv, counts.recv, settings.type, settings.memory);
    if (comm.rank() % 2 == 0) {
      comm.isend(outgoing, partner(comm), 0, settings.stream).wait();
      return comm.irecv(incoming, partner(comm), 0, settings.stream);
    }
    comm.irecv(incoming, partner(comm), 0, settings.stream).wait();
    return comm.isend(outgoing, partner(comm), 0, settings.stream);
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Send + MPI_Recv", "MPI_Isend + MPI_Irecv"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int rank = mpi.rank();
    const int bytes = mpi_count(counts.send * size_of(settings.type));
    const int other = rank ^ 1;
    const bool first = rank % 2 == 0;  // sends first, as start()
    const auto receive = [&] { return MPI_Recv(mpi.recv, bytes, MPI_BYTE, other, 0, mpi.comm, MPI_STATUS_IGNORE); };
    const auto send = [&] { return MPI_Send(mpi.send, bytes, MPI_BYTE, other, 0, mpi.comm); };
    mpi.run(
        [&] {
          int code = first ? send() : receive();
          if (code == MPI_SUCCESS) code = first ? receive() : send();
          return code;
        },
        [&](MPI_Request* request) {
          // The reply is the request MPI_Wait completes; the first message is waited for here.
          MPI_Request step = MPI_REQUEST_NULL;
          if (!first) {
            int code = MPI_Irecv(mpi.recv, bytes, MPI_BYTE, other, 0, mpi.comm, &step);
            if (code == MPI_SUCCESS) code = MPI_Wait(&step, MPI_STATUS_IGNORE);
            return code == MPI_SUCCESS ? MPI_Isend(mpi.send, bytes, MPI_BYTE, other, 0, mpi.comm, request) : code;
          }
          int code = MPI_Isend(mpi.send, bytes, MPI_BYTE, other, 0, mpi.comm, &step);
          if (code == MPI_SUCCESS) code = MPI_Wait(&step, MPI_STATUS_IGNORE);
          return code == MPI_SUCCESS ? MPI_Irecv(mpi.recv, bytes, MPI_BYTE, other, 0, mpi.comm, request) : code;
        });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::PingPong{}); }
