#pragma once

#include <mpi.h>

#include <chrono>

#include "../backend.hpp"
#include "mpi_arrivals.hpp"
#include "mpi_native_shapes.hpp"
#include "patterns/collective_tags.hpp"
#include "mpi_timeout_report.hpp"
#include "process_liveness.hpp"
#include "progress_hooks.hpp"
#include "scratch_pool.hpp"

namespace meshcomm::detail {

/// Open MPI point-to-point on two private duplicates of a communicator: one per lane.
class MpiBackend final : public Backend {
 public:
  /// Takes ownership of `user` (a communicator private to meshcomm) and duplicates it for the
  /// internal lane. Collective over `user`; waits at most `timeout` for the others.
  MpiBackend(MPI_Comm user, std::chrono::milliseconds timeout);
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
  /// Posts Open MPI's collective for `args` on `comm` (the communicator of its shape).
  std::shared_ptr<WorkState> post_native(const CollectiveArgs& args, MPI_Comm comm);
  // MPI_Dist_graph_create_adjacent + MPI_Ineighbor_alltoallv (mpi_neighbor_graph.cpp).
  std::unique_ptr<NeighborGraph> create_neighbor_graph(std::span<const int> sources,
                                                       std::span<const int> destinations) override;

  /// The MPI communicator of a lane (for native collectives).
  [[nodiscard]] MPI_Comm comm(Lane lane) const noexcept { return lane == Lane::user ? user_ : internal_; }

 private:
  /// The communicator on which a message's tag may be a collective's (CollectiveTags): the
  /// internal lane's where tags are wide enough, else none.
  [[nodiscard]] MPI_Comm collective_comm(Lane lane) const noexcept {
    return lane == Lane::internal && max_tag_ >= CollectiveTags::kLargest ? internal_ : MPI_COMM_NULL;
  }

  MPI_Comm user_ = MPI_COMM_NULL;
  MPI_Comm internal_ = MPI_COMM_NULL;
  /// A split's duplication of user_ timed out: its request stays with MPI, so user_ is never freed.
  bool user_carries_unfinished_ = false;
  int rank_ = 0;
  int size_ = 1;
  int max_tag_ = 32767;
  std::chrono::milliseconds timeout_;
  /// Each rank's process, so that waits can tell an ended peer (peer_failure) from a slow one.
  RankProcesses processes_;
  /// Where the ranks tell each other what they waited in when a native collective timed out.
  std::unique_ptr<MpiTimeoutReports> timeout_reports_;
  /// The communicators native collectives run on, one per shape (made on internal_).
  std::unique_ptr<MpiNativeShapes> native_shapes_;
  /// Copies native collectives send from, reused: a fresh large one costs page faults per call.
  ScratchPool scratch_{ScratchPool::Sharing::host_blocks_per_thread};
  /// Drives Open MPI from every wait of this process; one for all mpi backends, null unless MPI
  /// runs with MPI_THREAD_MULTIPLE (a wait may be on any thread).
  std::shared_ptr<ProgressHook> progress_hook_;
};

/// A backend on a private duplicate of `comm`; collective over `comm`, waiting at most `timeout`
/// for the other ranks.
std::unique_ptr<Backend> make_mpi_backend(MPI_Comm comm, std::chrono::milliseconds timeout);

/// MPI_Comm_idup of `comm`, waited for at most `timeout`: a rank that never joins makes it an
/// Error(timeout) naming `what`, where the blocking MPI_Comm_dup would wait forever, and, where
/// `arrivals` (announced before) can tell, the ranks that never arrived.
MPI_Comm duplicate_communicator(MPI_Comm comm, std::chrono::milliseconds timeout, const char* what,
                                const ErrorContext& where, const MpiArrivals* arrivals = nullptr);

}  // namespace meshcomm::detail
