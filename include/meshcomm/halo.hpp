#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/export.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"
#include "meshcomm/work.hpp"

namespace meshcomm {

class Communicator;

namespace detail {
class HaloPlanImpl;
}

/// How a halo plan moves its rows.
enum class HaloStrategy : std::uint8_t {
  p2p,                 ///< grouped isend/irecv with each neighbour
  neighbor_alltoallv,  ///< one all-to-allv with zero counts for every non-neighbour (anemoi's choice)
  mpi_neighbor,        ///< MPI_Ineighbor_alltoallv on a distributed graph (mpi backend only)
  /// One-sided puts into the neighbours' memory (ucx backend only): each receiver grants a
  /// credit as it starts, the sender puts the rows and notifies. Rows land straight in the
  /// receiver's extended buffer where it comes from Communicator::allocate_shared (forward, rows
  /// one dense block), else in the plan's own mapped inbox, copied or added from there. In the
  /// adjoint, a sender on the owner's host whose buffer comes from allocate_shared offers its
  /// rows instead, and the owner adds them straight from its memory.
  rma,
};

/// "p2p", "neighbor_alltoallv", "mpi_neighbor", "rma".
MESHCOMM_API std::string_view to_string(HaloStrategy strategy) noexcept;

/// A 1-D sequence sharded over a communicator, and the halo each rank needs around its shard.
///
/// Each rank's buffer is "extended": `left` halo rows, then its own `shard_rows[rank]` rows, then
/// `right` halo rows; row i starts at element `i * row_stride`. A causal window of W needs
/// `left = W - 1`; a symmetric window of w needs `left = right = w`. A halo wider than a
/// neighbour's shard gathers rows from as many ranks as it takes. Without `periodic`, halo rows
/// beyond either end of the sequence are left as they are.
struct HaloSpec {
  std::vector<std::size_t> shard_rows;  ///< rows of every rank's shard, in rank order (uneven allowed)
  std::int64_t left = 0;                ///< halo rows before the shard
  std::int64_t right = 0;               ///< halo rows after the shard
  std::size_t row_elements = 1;         ///< elements per row
  DataType type = DataType::f32;
  std::size_t row_stride = 0;  ///< elements from one row to the next; 0: `row_elements` (dense)
  bool periodic = false;
  HaloStrategy strategy = HaloStrategy::p2p;
  /// Where the extended buffers live: host, or cuda (device memory; rows are packed by kernels).
  /// On the mpi backend CUDA memory moves between processes sharing a GPU through CUDA IPC, with
  /// strategy p2p only.
  MemoryKind memory = MemoryKind::host;
};

/// An irregular neighbourhood: what this rank sends to and receives from each peer. Received
/// rows land after the own rows, peer by peer in the order given.
struct HaloGraphSpec {
  std::size_t own_rows = 0;
  std::vector<int> send_peers;                         ///< peers this rank sends to
  std::vector<std::vector<std::size_t>> send_rows;     ///< for each, the own-row indices sent
  std::vector<int> recv_peers;                         ///< peers this rank receives from
  std::vector<std::size_t> recv_rows;                  ///< for each, the number of rows received
  std::size_t row_elements = 1;
  DataType type = DataType::f32;
  std::size_t row_stride = 0;
  HaloStrategy strategy = HaloStrategy::p2p;
  MemoryKind memory = MemoryKind::host;  ///< as in HaloSpec
};

/// A halo exchange planned once and started many times (split-phase: start, compute the
/// interior, wait).
///
/// ```
/// auto plan = HaloPlan::create(sp, {.shard_rows = rows, .left = window - 1, .row_elements = heads * dim});
/// auto work = plan.start(keys.data());   // fills the left halo rows of `keys`
/// compute_interior();
/// work.wait();
/// ```
class MESHCOMM_API HaloPlan {
 public:
  /// Collective over `comm`: validates the spec (errors name the value) and checks that every
  /// rank passed the same one. The communicator must outlive the plan.
  static HaloPlan create(Communicator& comm, const HaloSpec& spec);
  /// Collective over `comm`, for an irregular neighbourhood.
  static HaloPlan create(Communicator& comm, const HaloGraphSpec& spec);

  HaloPlan(HaloPlan&&) noexcept;
  HaloPlan& operator=(HaloPlan&&) noexcept;
  ~HaloPlan();

  /// Rows of the extended buffer: left halo + own rows + right halo (graph form: own + received).
  [[nodiscard]] std::size_t extended_rows() const noexcept;
  /// Index of the first own row in the extended buffer.
  [[nodiscard]] std::size_t own_first_row() const noexcept;
  /// Bytes this rank sends per start (excluding local copies).
  [[nodiscard]] std::size_t bytes_sent() const noexcept;
  /// The strategy in use.
  [[nodiscard]] HaloStrategy strategy() const noexcept;
  /// This rank's side of the plan in words: strategy, backend, memory, peers and bytes per start;
  /// for rma also which way its starts have moved their rows so far (straight into a buffer from
  /// Communicator::allocate_shared, or through the plan's mapped inbox for any other buffer, and
  /// in the adjoint offered to same-host owners or put), so a slower path is never silent.
  [[nodiscard]] std::string describe() const;

  /// Forward: fills the halo rows of `extended` from the rows their owners hold. On CUDA memory
  /// the exchange starts after `stream`'s earlier work (which wrote the own rows). On inproc its
  /// Work completes with the rows in place; over mpi (CUDA IPC) the exchange is queued on
  /// `stream`, later work on it sees the rows, and the Work completes when the stream has run it
  /// (the host waits only for the peers' small signals).
  Work start(void* extended, StreamRef stream = {});
  /// Adjoint: sends the gradients in the halo rows of `extended_gradient` back to the rows they
  /// came from and adds them there (the transpose of `start`). Halo rows are left as they were.
  Work start_adjoint(void* extended_gradient, StreamRef stream = {});

 private:
  explicit HaloPlan(std::unique_ptr<detail::HaloPlanImpl> impl) noexcept;
  std::unique_ptr<detail::HaloPlanImpl> impl_;
};

}  // namespace meshcomm
