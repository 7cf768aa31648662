#pragma once

// One cache line bounced between the cores of a node's first two ranks, through memory both map
// (an MPI-3 shared window): the round trip that a small call between two ranks pays at least once
// to hand its data over, and which the host sets, not the library (on one core complex or across
// two; in a virtual machine, wherever the hypervisor has put the two vCPUs for this launch).
// line_bounce_perf prints it round by round; the other perftests print it before and after their
// sizes, so that each launch says what the host gave it.

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace meshcomm::perf {

/// A line in memory that the ranks of one node map, bounced between that node's ranks 0 and 1.
class SharedLine {
 public:
  /// Collective over `world`, which it splits by node; on a node with one rank there is no line
  /// (has_partner() is false) and bounce() is not to be called.
  explicit SharedLine(MPI_Comm world);
  ~SharedLine();
  SharedLine(const SharedLine&) = delete;
  SharedLine& operator=(const SharedLine&) = delete;

  /// Whether this rank's node has a second rank to bounce the line with.
  [[nodiscard]] bool has_partner() const noexcept { return node_size_ >= 2; }
  /// Whether the node's ranks outnumber its cores: a bounce then waits on the scheduler as much as
  /// on the line.
  [[nodiscard]] bool ranks_outnumber_cores() const noexcept { return node_size_ > node_cores_; }
  /// This rank's rank on its node.
  [[nodiscard]] int node_rank() const noexcept { return node_rank_; }
  /// Every rank of the node's core as it was made, on the node's rank 0 (empty elsewhere).
  [[nodiscard]] const std::vector<int>& cores() const noexcept { return cores_; }

  /// One round of `trips` round trips, collective over the node: on the node's ranks 0 and 1 the
  /// time per round trip in ns that this rank saw, 0 on its other ranks. Throws
  /// std::runtime_error, naming the partner, where it has not answered for 10 s.
  double bounce(int trips);
  /// The median of `rounds` rounds of bounce(`trips`).
  double median(int rounds, int trips);

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::uint64_t* line_ = nullptr;
  int node_rank_ = 0;
  int node_size_ = 1;
  int node_cores_ = 1;  ///< the cores the node's ranks may run on, all together
  std::uint64_t count_ = 0;  ///< the last value stored in the line
  std::vector<int> cores_;
};

}  // namespace meshcomm::perf
