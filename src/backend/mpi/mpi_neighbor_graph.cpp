// The mpi backend's neighbourhood graphs: MPI_Dist_graph_create_adjacent once, then
// MPI_Ineighbor_alltoallv per exchange. Every edge gets its own slot, so two edges between the
// same ranks (left and right neighbour on a ring of two) never mix.

#include <fmt/format.h>

#include "mpi_backend.hpp"
#include "mpi_check.hpp"
#include "mpi_collective_request.hpp"

namespace meshcomm::detail {

namespace {

class MpiNeighborGraph final : public NeighborGraph {
 public:
  MpiNeighborGraph(MPI_Comm graph, int rank, std::shared_ptr<FatalState> fatal, const RankProcesses* processes)
      : graph_(graph), rank_(rank), fatal_(std::move(fatal)), processes_(processes) {}
  ~MpiNeighborGraph() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A fatal communicator may have left an exchange with MPI, which cannot withdraw it and may
    // still progress it: its graph is then left behind.
    if (finalized == 0 && !fatal_->is_set() && graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  }

  std::shared_ptr<WorkState> start(const void* send, std::span<const int> send_counts,
                                   std::span<const int> send_offsets, void* recv, std::span<const int> recv_counts,
                                   std::span<const int> recv_offsets) override {
    const ErrorContext where{.backend = "mpi", .operation = "MPI_Ineighbor_alltoallv", .rank = rank_};
    auto state = std::make_shared<MpiCollectiveRequest>(where, fatal_, processes_);
    check_mpi(MPI_Ineighbor_alltoallv(send, send_counts.data(), send_offsets.data(), MPI_BYTE, recv, recv_counts.data(),
                                      recv_offsets.data(), MPI_BYTE, graph_, &state->request),
              "MPI_Ineighbor_alltoallv", where);
    return state;
  }

 private:
  MPI_Comm graph_;
  int rank_;
  std::shared_ptr<FatalState> fatal_;
  const RankProcesses* processes_;  // the backend's, which outlives the graph
};

}  // namespace

std::unique_ptr<NeighborGraph> MpiBackend::create_neighbor_graph(std::span<const int> sources,
                                                                 std::span<const int> destinations) {
  MPI_Comm graph = MPI_COMM_NULL;
  const ErrorContext where{.backend = "mpi", .operation = "halo mpi_neighbor", .rank = rank_};
  check_mpi(MPI_Dist_graph_create_adjacent(internal_, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                           static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &graph),
            "MPI_Dist_graph_create_adjacent", where);
  check_mpi(MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", where);
  return std::make_unique<MpiNeighborGraph>(graph, rank_, fatal_state(), &processes_);
}

}  // namespace meshcomm::detail
