// alltoallv_perf: about `count` elements per rank in blocks of differing sizes, one to each peer
// (MoE-style token routing); busbw = algbw × (n-1)/n.
//
// Rank r sends peer p pair_units(r, p) units of count / (2 × ranks) elements: one, two or three
// units, the same both ways of a pair, so that each rank's blocks differ in size while every
// pair agrees on its counts.

#include <numeric>
#include <vector>

#include "engine/perf_operation.hpp"
#include "verifiable/verifiable.hpp"

namespace meshcomm::perf {
namespace {

/// Units rank `from` sends rank `to` (and receives from it).
std::size_t pair_units(int from, int to) { return 1 + static_cast<std::size_t>((from + to) % 3); }

/// One rank's counts and offsets, in elements, in peer order; the same both ways.
struct Blocks {
  std::vector<std::size_t> counts;
  std::vector<std::size_t> offsets;

  Blocks(std::size_t count, int ranks, int rank) {
    const std::size_t unit = std::max<std::size_t>(1, count / (2 * static_cast<std::size_t>(ranks)));
    for (int peer = 0; peer < ranks; ++peer) counts.push_back(unit * pair_units(rank, peer));
    offsets.resize(counts.size());
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), std::size_t{0});
  }
  [[nodiscard]] std::size_t total() const { return offsets.back() + counts.back(); }
};

class AllToAllv final : public PerfOperation {
 public:
  std::string_view name() const noexcept override { return "alltoallv"; }
  bool has_in_place() const noexcept override { return false; }  // as MPI_Alltoallv's MPI_IN_PLACE is rare
  PerfCounts counts(std::size_t count, int ranks, int rank) const override {
    const std::size_t total = Blocks(count, ranks, rank).total();
    return {.send = total, .recv = total, .reported = total};
  }
  double bus_factor(int ranks) const override { return (ranks - 1.0) / ranks; }
  void fill(void* send, void*, const PerfCounts& counts, const PerfSettings& settings,
            const Communicator& comm) const override {
    const Blocks blocks(count_of(counts, comm), comm.size(), comm.rank());
    for (int to = 0; to < comm.size(); ++to) {
      verifiable::fill_payload(send, blocks.offsets[to], blocks.counts[to], settings.type, comm.rank(), to);
    }
  }
  std::size_t count_wrong(const void* recv, const PerfCounts& counts, const PerfSettings& settings,
                          const Communicator& comm) const override {
    const Blocks blocks(count_of(counts, comm), comm.size(), comm.rank());
    std::size_t wrong = 0;
    for (int from = 0; from < comm.size(); ++from) {
      wrong += verifiable::count_wrong(recv, blocks.offsets[from], blocks.counts[from], settings.type,
                                       [&](std::size_t k) { return verifiable::payload(from, comm.rank(), k); });
    }
    return wrong;
  }
  Work start(Communicator& comm, const void* send, void* recv, const PerfCounts& counts,
             const PerfSettings& settings) const override {
    // The call copies what it needs of the layout as it starts.
    const Blocks blocks(count_of(counts, comm), comm.size(), comm.rank());
    return comm.all_to_allv(ConstBufferView(send, counts.send, settings.type, settings.memory),
                            BufferView(recv, counts.recv, settings.type, settings.memory),
                            {.send_counts = blocks.counts,
                             .send_offsets = blocks.offsets,
                             .recv_counts = blocks.counts,
                             .recv_offsets = blocks.offsets},
                            {.algorithm = settings.algorithm, .stream = settings.stream});
  }
  MpiCallNames mpi_calls() const override { return {"MPI_Alltoallv", "MPI_Ialltoallv"}; }
  void call_mpi(const MpiReference& mpi, const PerfCounts& counts, const PerfSettings& settings) const override {
    const int ranks = mpi.size();
    const int rank = mpi.rank();
    const Blocks blocks(counts_per_rank_of(counts.send, ranks, rank), ranks, rank);
    const std::size_t element = size_of(settings.type);
    std::vector<int> bytes, displacements;
    for (int peer = 0; peer < ranks; ++peer) {
      bytes.push_back(mpi_count(blocks.counts[peer] * element));
      displacements.push_back(mpi_count(blocks.offsets[peer] * element));
    }
    mpi.run(
        [&] {
          return MPI_Alltoallv(mpi.send, bytes.data(), displacements.data(), MPI_BYTE, mpi.recv, bytes.data(),
                               displacements.data(), MPI_BYTE, mpi.comm);
        },
        [&](MPI_Request* request) {
          return MPI_Ialltoallv(mpi.send, bytes.data(), displacements.data(), MPI_BYTE, mpi.recv, bytes.data(),
                                displacements.data(), MPI_BYTE, mpi.comm, request);
        });
  }

 private:
  /// The size's count back from a rank's total: the units are whole, so the layout it gives is
  /// the one counts() made.
  static std::size_t count_of(const PerfCounts& counts, const Communicator& comm) {
    return counts_per_rank_of(counts.send, comm.size(), comm.rank());
  }
  static std::size_t counts_per_rank_of(std::size_t total, int ranks, int rank) {
    std::size_t units = 0;
    for (int peer = 0; peer < ranks; ++peer) units += pair_units(rank, peer);
    return total / units * 2 * static_cast<std::size_t>(ranks);
  }
};

}  // namespace
}  // namespace meshcomm::perf

int main(int argc, char** argv) { return meshcomm::perf::run_perf_main(argc, argv, meshcomm::perf::AllToAllv{}); }
