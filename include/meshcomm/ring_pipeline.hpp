#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "meshcomm/export.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"
#include "meshcomm/work.hpp"

namespace meshcomm {

class Communicator;

namespace detail {
class RingPipelineImpl;
}

/// Which way blocks travel around the ring.
enum class RingDirection : std::uint8_t {
  forward,   ///< to rank + 1, from rank - 1
  backward,  ///< to rank - 1, from rank + 1
};

/// How blocks move from rank to rank.
enum class RingTransfer : std::uint8_t {
  automatic,    ///< host memory: messages; CUDA memory on inproc or mpi: copy_engine
  messages,     ///< the backend's send and receive
  sm_copy,      ///< CUDA, ranks sharing a GPU (inproc threads, or mpi processes on one node through
                ///< CUDA IPC): a copy kernel of a few CTAs on a high-priority stream pulls the block
                ///< straight from the neighbour's buffer (uses SMs beside the compute)
  copy_engine,  ///< CUDA, as sm_copy: the copy engines pull it through pinned host memory (as peer
                ///< copies over NVLink do on multi-GPU machines; leaves the SMs to the compute)
};

/// "automatic", "messages", "sm_copy", "copy_engine".
MESHCOMM_API std::string_view to_string(RingTransfer transfer) noexcept;

/// A ring pipeline's shape. With CUDA memory and a device path, creating and destroying the
/// pipeline are collective (buffers and events are exchanged, and freed only once no neighbour
/// reads them).
struct RingPipelineSpec {
  std::size_t block_bytes = 0;  ///< bytes of one block (e.g. K and V packed together); at least 1
  RingDirection direction = RingDirection::forward;
  /// Drive transfers from a background thread, so they progress while the caller computes
  /// (on by default; off, they progress when waited on). Host memory with messages only.
  bool progress_thread = true;
  /// Where the two buffers live. On CUDA memory `start` and `advance` take the compute stream:
  /// a transfer starts after the stream's work so far, and the stream's later work waits for
  /// the received block, with no host synchronisation.
  MemoryKind memory = MemoryKind::host;
  RingTransfer transfer = RingTransfer::automatic;
};

/// A ring of persistent double buffers for RingAttention: each step sends the block in
/// `current()` on and receives the next one into the other buffer, while the caller computes on
/// `current()`. Never more than two blocks per direction exist.
///
/// ```
/// auto ring = RingPipeline::create(sp, {.block_bytes = kv_bytes});
/// pack(ring.current());                      // this rank's own K and V
/// for (int step = 0; step < sp.size(); ++step) {
///   Work transfer = step + 1 < sp.size() ? ring.start() : Work();
///   attend(ring.current());                  // overlaps the transfer
///   transfer.wait();
///   if (step + 1 < sp.size()) ring.advance();  // the received block becomes current
/// }
/// ```
class MESHCOMM_API RingPipeline {
 public:
  /// Local: allocates the two buffers. The communicator must outlive the pipeline. Throws
  /// Error(invalid_argument) naming the field for a `block_bytes` of 0.
  static RingPipeline create(Communicator& comm, const RingPipelineSpec& spec);

  RingPipeline(RingPipeline&&) noexcept;
  RingPipeline& operator=(RingPipeline&&) noexcept;
  ~RingPipeline();

  /// The block to compute on (and, after `start`, the one being sent: do not write it then).
  /// Device memory when the spec says cuda.
  [[nodiscard]] std::span<std::byte> current() noexcept;
  /// Starts sending `current()` on and receiving the next block. Every rank must call it the same
  /// number of times. Throws Error(invalid_argument) while a transfer is still in flight. On CUDA
  /// memory the transfer follows `stream`'s work so far. A step whose transfer times out names
  /// the neighbour not heard from; after a failed transfer, which may still write the buffers,
  /// `start` and `advance` throw Error(aborted): destroy the pipeline and create a new one.
  Work start(StreamRef stream = {});
  /// The received block becomes `current()`: on host memory once the transfer from `start` is
  /// complete (rethrowing its error if it failed); on CUDA memory at once, with `stream`'s later
  /// work ordered after the transfer.
  void advance(StreamRef stream = {});

  /// The rank this one sends to and the one it receives from.
  [[nodiscard]] int send_peer() const noexcept;
  [[nodiscard]] int recv_peer() const noexcept;

 private:
  explicit RingPipeline(std::unique_ptr<detail::RingPipelineImpl> impl) noexcept;
  std::unique_ptr<detail::RingPipelineImpl> impl_;
};

}  // namespace meshcomm
