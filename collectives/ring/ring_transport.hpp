#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "communicator_impl.hpp"
#include "meshcomm/ring_pipeline.hpp"

namespace meshcomm::detail {

/// How a RingPipeline's blocks move: the two buffers and one step's transfer.
class RingTransport {
 public:
  virtual ~RingTransport() = default;
  /// The block to compute on.
  [[nodiscard]] virtual std::span<std::byte> current() noexcept = 0;
  /// Starts sending the current block to `send_peer` and receiving the next into the other
  /// buffer (on CUDA memory after `stream`'s work so far).
  virtual Work start(OperationLabel label, StreamRef stream) = 0;
  /// The received block becomes current (on CUDA memory, `stream` waits for it).
  virtual void advance(StreamRef stream) = 0;
};

/// Where a ring's blocks go and come from.
struct RingPeers {
  int send;
  int receive;
};

/// Blocks as the backend's messages, on host or CUDA memory; optionally driven by a progress
/// thread.
std::unique_ptr<RingTransport> make_message_ring(CommunicatorImpl& comm, const RingPipelineSpec& spec,
                                                 RingPeers peers);

/// Blocks pulled straight from the neighbour's device buffer by ranks sharing a GPU (inproc
/// threads, or mpi processes through CUDA IPC), with streams and events: `sm_copy` or
/// `copy_engine`. Collective: exchanges the buffers and events.
std::unique_ptr<RingTransport> make_device_ring(CommunicatorImpl& comm, const RingPipelineSpec& spec,
                                                RingPeers peers, RingTransfer transfer);

}  // namespace meshcomm::detail
