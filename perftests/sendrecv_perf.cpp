// sendrecv_perf: each rank sends `count` elements to rank+1 and receives from rank-1 (one ring
// step); busbw = algbw. Out of place only: one buffer cannot be sent and received at once.

#include "engine/point_to_point_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

class SendRecv final : public PointToPointOperation {
 public:
  std::string_view name() const noexcept override { return "sendrecv"; }
  double bus_factor(int) const override { return 1.0; }
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
  MpiCallNames mpi_calls() const override { return {"MPI_Sendrecv", "MPI_Irecv + MPI_Isend"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int rank = mpi.rank();
    const int ranks = mpi.size();
    const int left = (rank + ranks - 1) % ranks;
    const int right = (rank + 1) % ranks;
    const int bytes = mpi_count(counts.send * size_of(settings.type));
    mpi.run(
        [&] {
          return MPI_Sendrecv(mpi.send, bytes, MPI_BYTE, right, 0, mpi.recv, bytes, MPI_BYTE, left, 0, mpi.comm,
                              MPI_STATUS_IGNORE);
        },
        [&](MPI_Request* request) {
          MPI_Request send_request = MPI_REQUEST_NULL;
          int code = MPI_Irecv(mpi.recv, bytes, MPI_BYTE, left, 0, mpi.comm, request);
          if (code == MPI_SUCCESS) code = MPI_Isend(mpi.send, bytes, MPI_BYTE, right, 0, mpi.comm, &send_request);
          if (code == MPI_SUCCESS) code = MPI_Wait(&send_request, MPI_STATUS_IGNORE);
          return code;
        });
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::SendRecv{}); }
