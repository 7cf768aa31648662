#pragma once

#include <mpi.h>

#include "../backend.hpp"

namespace meshcomm::detail {

/// Open MPI point-to-point on two private duplicates of a communicator: one per lane.
class MpiBackend final : public Backend {
 public:
  /// Takes ownership of `user` (a communicator private to meshcomm) and duplicates it for the
  /// internal lane. Collective over `user`.
  explicit MpiBackend(MPI_Comm user);
  ~MpiBackend() override;
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  [[nodiscard]] BackendKind kind() const noexcept override { return BackendKind::mpi; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int max_tag() const noexcept override { return max_tag_; }
  [[nodiscard]] bool thread_safe() const noexcept override {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return level == MPI_THREAD_MULTIPLE;
  }

  std::shared_ptr<WorkState> isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::shared_ptr<WorkState> irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::unique_ptr<Backend> split(std::span<const int> members, int color, std::uint64_t split_index) override;

  // Open MPI's own collectives (mpi_native_collectives.cpp).
  [[nodiscard]] std::string native_unsupported_reason(const CollectiveArgs& args) const override;
  std::shared_ptr<WorkState> start_native(const CollectiveArgs& args) override;
  // MPI_Dist_graph_create_adjacent + MPI_Ineighbor_alltoallv (mpi_neighbor_graph.cpp).
  std::unique_ptr<NeighborGraph> create_neighbor_graph(std::span<const int> sources,
                                                       std::span<const int> destinations) override;

  /// The MPI communicator of a lane (for native collectives).
  [[nodiscard]] MPI_Comm comm(Lane lane) const noexcept { return lane == Lane::user ? user_ : internal_; }

 private:
  MPI_Comm user_ = MPI_COMM_NULL;
  MPI_Comm internal_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int max_tag_ = 32767;
};

/// A backend on a private duplicate of `comm`; collective over `comm`.
std::unique_ptr<Backend> make_mpi_backend(MPI_Comm comm);

}  // namespace meshcomm::detail
