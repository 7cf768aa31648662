#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "memory_floor/memory_floor.hpp"

namespace meshcomm::perf::memory_floor {
namespace {

using detail::StoreWidth;

/// Writes `bytes` at `to` with streaming stores from a small source that stays in the cache:
/// the memory traffic of writing the output and nothing else.
void stream_write(std::byte* to, const std::byte* cached_source, std::size_t source_bytes, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes; done += source_bytes) {
    detail::streaming_copy(to + done, cached_source, std::min(source_bytes, bytes - done));
  }
}

/// Every rank's block of `block` bytes in one MPI shared-memory window, which each rank maps: the
/// blocks where an all-gather of shared buffers finds them. Empty (no blocks) where the ranks are
/// not all on one node.
class NodeBlocks {
 public:
  NodeBlocks(MPI_Comm comm, std::size_t block, unsigned char value) {
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_);
    int node_size = 0;
    MPI_Comm_size(node_, &node_size);
    int everywhere = node_size == size ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, comm);
    if (everywhere == 0) return;
    std::byte* own = nullptr;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(block), 1, MPI_INFO_NULL, node_, &own, &window_);
    std::memset(own, value, block);
    for (int peer = 0; peer < size; ++peer) {
      MPI_Aint length = 0;
      int unit = 0;
      std::byte* base = nullptr;
      MPI_Win_shared_query(window_, peer, &length, &unit, &base);
      blocks_.push_back(base);
    }
    MPI_Barrier(comm);
  }
  ~NodeBlocks() {
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
    MPI_Comm_free(&node_);
  }
  NodeBlocks(const NodeBlocks&) = delete;
  NodeBlocks& operator=(const NodeBlocks&) = delete;

  /// Every rank's block in rank order, mapped here; none where the ranks are not all on one node.
  [[nodiscard]] const std::vector<const std::byte*>& blocks() const noexcept { return blocks_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<const std::byte*> blocks_;
};

}  // namespace

std::size_t measure_all_gather(const Run& run, std::size_t bytes) {
  auto& comm = run.comm;
  const MPI_Comm raw = run.raw;
  const int size = comm.size();
  const int rank = comm.rank();
  const StoreWidth widest = run.widest;
  constexpr std::size_t kCachedSource = std::size_t{64} << 10;
  PageBuffer cached_source(kCachedSource, 0x5A);
  const std::size_t block = bytes / static_cast<std::size_t>(size);
  bytes = block * static_cast<std::size_t>(size);
  PageBuffer user_input(block, static_cast<unsigned char>(rank + 1));
  PageBuffer output(bytes, 0);
  PageBuffer gathered_by_mpi(bytes, 0);  // Open MPI's own, as all_gather_perf gives native its buffers
  PageBuffer private_source(bytes, 0x33);
  PageBuffer own_block(block, 0x44);
  auto shared_input = comm.allocate_shared(block);
  auto shared_output = comm.allocate_shared(bytes);
  std::memset(shared_input.data(), rank + 1, block);
  // A single-copy all-gather of user buffers through the kernel (CMA, as Open MPI's vader
  // uses it): each rank reads its peers' blocks straight from their memory with
  // process_vm_readv, then all wait until every rank has read (the inputs must stay put).
  struct Peer {
    std::uint64_t pid;
    std::uint64_t address;
  };
  const Peer me{static_cast<std::uint64_t>(getpid()), reinterpret_cast<std::uint64_t>(user_input.data)};
  std::vector<Peer> peers(static_cast<std::size_t>(size));
  MPI_Allgather(&me, sizeof me, MPI_BYTE, peers.data(), sizeof me, MPI_BYTE, raw);
  const auto cma_gather = [&] {
    for (int peer = 0; peer < size; ++peer) {
      std::byte* to = output.data + static_cast<std::size_t>(peer) * block;
      if (peer == rank) {
        std::memcpy(to, user_input.data, block);
        continue;
      }
      const iovec local{to, block};
      const iovec remote{reinterpret_cast<void*>(peers[peer].address), block};
      if (process_vm_readv(static_cast<pid_t>(peers[peer].pid), &local, 1, &remote, 1, 0) !=
          static_cast<ssize_t>(block)) {
        throw std::runtime_error(fmt::format("process_vm_readv from rank {}: {}", peer, std::strerror(errno)));
      }
    }
    MPI_Barrier(raw);
  };
  // `algorithm` "" is the one the table picks.
  const auto shared_gather = [&](bool in_place, const char* algorithm) {
    auto* gathered = static_cast<std::byte*>(shared_output.data());
    const void* own = in_place ? gathered + rank * block : shared_input.data();
    comm.all_gather(ConstBufferView(own, block, DataType::u8), BufferView(gathered, bytes, DataType::u8),
                    {.algorithm = algorithm})
        .wait();
  };
  const auto shm_gather = [&](bool in_place) { shared_gather(in_place, "shm"); };
  const auto mpi_gather = [&](bool in_place, bool nonblocking) {
    const void* send = in_place ? MPI_IN_PLACE : user_input.data;
    const int count = static_cast<int>(block);
    std::byte* gathered = gathered_by_mpi.data;
    call_mpi(
        nonblocking, [&] { MPI_Allgather(send, count, MPI_BYTE, gathered, count, MPI_BYTE, raw); },
        [&](MPI_Request* request) { MPI_Iallgather(send, count, MPI_BYTE, gathered, count, MPI_BYTE, raw, request); });
  };
  const std::size_t written_in_place = bytes - block;
  const auto copy_with = [&](StoreWidth width) {
    return [&, width] { detail::streaming_copy(output.data, private_source.data, bytes, width); };
  };
  // The floor's traffic is an all-gather's: `blocks` blocks read from a block-sized source per
  // rank (the node reads from `bytes` of inputs, as the ranks' blocks are) and written out.
  const auto copy_blocks = [&](int blocks) {
    return [&, blocks] {
      for (int b = 0; b < blocks; ++b) {
        detail::streaming_copy(output.data + b * block, own_block.data, block, widest);
      }
    };
  };
  // The same traffic read where an all-gather of shared buffers reads it: every rank's block
  // in memory its owner wrote and every rank maps, each read by every rank.
  const NodeBlocks node_blocks(raw, block, static_cast<unsigned char>(rank + 1));
  const auto copy_node_blocks = [&](bool in_place) {
    return [&, in_place] {
      for (int b = 0; b < size; ++b) {
        if (in_place && b == rank) continue;
        detail::streaming_copy(output.data + b * block, node_blocks.blocks()[static_cast<std::size_t>(b)], block,
                               widest);
      }
    };
  };
  std::vector<Variant> variants = {
      {"MPI_Allgather", "Open MPI's all-gather", false, Role::mpi, [&] { mpi_gather(false, false); }},
      {"MPI_Iallgather", "the same, nonblocking (meshcomm's native)", false, Role::mpi,
       [&] { mpi_gather(false, true); }},
      {"meshcomm shm", "all_gather algo=shm, shared buffers", false, Role::other, [&] { shm_gather(false); }},
      {"meshcomm default", "all_gather as the table picks it, shared buffers", false, Role::other,
       [&] { shared_gather(false, ""); }},
      {"CMA single copy", "process_vm_readv of the peers' user buffers", false, Role::other, cma_gather},
      {"read+write floor", "streaming copies of its block over the whole output", false, Role::floor,
       copy_blocks(size)},
      {"read+write floor, node's blocks", "the same from every rank's block, in memory they all map", false,
       Role::floor, copy_node_blocks(false)},
      {"store-only floor", "streaming stores of the whole output, no reads", false, Role::other,
       [&] { stream_write(output.data, cached_source.data, kCachedSource, bytes); }},
      {"MPI_Allgather in place", "Open MPI's all-gather, MPI_IN_PLACE", true, Role::mpi,
       [&] { mpi_gather(true, false); }},
      {"MPI_Iallgather in place", "the same, nonblocking", true, Role::mpi, [&] { mpi_gather(true, true); }},
      {"meshcomm shm in place", "all_gather algo=shm, in place", true, Role::other, [&] { shm_gather(true); }},
      {"meshcomm default in place", "all_gather as the table picks it, in place", true, Role::other,
       [&] { shared_gather(true, ""); }},
      {"read+write floor in place", "the same over the peers' blocks", true, Role::floor,
       copy_blocks(size - 1)},
      {"read+write floor, node's, in place", "the same from the peers' blocks where they lie", true, Role::floor,
       copy_node_blocks(true)},
      {"store-only floor in place", "streaming stores of the peers' blocks", true, Role::other,
       [&] { stream_write(output.data, cached_source.data, kCachedSource, written_in_place); }},
      {"streaming copy sse2", "the whole output from an output-sized source, 16-byte stores", false, Role::other,
       copy_with(StoreWidth::sse2)},
      {"memcpy", "the same with memcpy", false, Role::other,
       [&] { std::memcpy(output.data, private_source.data, bytes); }},
  };
  std::erase_if(variants, [&](const Variant& variant) {
    return (variant.name == "streaming copy sse2" && widest == StoreWidth::sse2) ||  // the floor's own copy
           (variant.name.starts_with("read+write floor, node's") && node_blocks.blocks().empty());
  });
  // The shm all-gather's results and the default's, checked outside the timed loop at both
  // placements: block r of the output holds rank r's bytes.
  std::size_t wrong = 0;
  for (const char* algorithm : {"shm", ""}) {
    for (bool in_place : {false, true}) {
      auto* gathered = static_cast<unsigned char*>(shared_output.data());
      std::memset(gathered, 0, bytes);
      if (in_place) std::memset(gathered + rank * block, rank + 1, block);
      MPI_Barrier(raw);
      shared_gather(in_place, algorithm);
      for (int from = 0; from < size; ++from) {
        wrong += static_cast<std::size_t>(std::count_if(gathered + from * block, gathered + (from + 1) * block,
                                                        [&](unsigned char value) { return value != from + 1; }));
      }
      MPI_Barrier(raw);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, raw);
  time_and_report(run, bytes, variants);
  return wrong;
}

}  // namespace meshcomm::perf::memory_floor
