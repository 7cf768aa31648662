#pragma once

// Halo rows between processes that share a GPU, through CUDA IPC: each rank packs what it sends
// into an outbox of its own, and each receiver copies its rows straight out of the senders'
// outboxes (mapped into its process). The mpi backend moves host memory only, so this is how a
// HaloPlan on CUDA memory runs on it.
//
// Everything is ordered on the caller's stream by events exchanged once; small host messages
// only say "recorded". Exchange k on a rank: wait for its receivers' "pulled k-1" signals; on
// the stream, wait for their pulled events (they have read the outbox), pack, record ready, and
// signal the receivers; wait for the senders' "ready k" signals; on the stream, wait for their
// ready events, copy each message out of its sender's outbox, unpack, record pulled, and signal
// the senders. Each event is re-recorded only after the signal that its last waiter has queued
// its wait, so no wait sees a later use, and no host waits on the GPU.

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// One message as the IPC transport sees it.
struct IpcMessage {
  int peer = 0;
  int slot = 0;
  std::size_t offset = 0;  ///< outgoing: where it starts in this rank's outbox (incoming: not used;
                           ///< the sender tells where it sits in its outbox)
  std::size_t bytes = 0;
};

/// The messages of one direction of a plan (forward or adjoint).
struct IpcDirectionLayout {
  std::vector<IpcMessage> out;
  std::vector<IpcMessage> in;
  std::size_t out_bytes = 0;
};

/// What an exchange does to the rows, each queued on the exchange's stream.
struct IpcRowWork {
  std::function<void(std::byte* outbox)> pack;           ///< outgoing rows into the outbox
  std::function<std::byte*(std::size_t index)> target;  ///< where the index-th incoming message goes
  std::function<void()> unpack;                          ///< the received rows into place
};

/// The outboxes and events of a plan, its peers' opened here, and where each incoming message
/// starts in its sender's outbox.
class HaloIpc {
 public:
  virtual ~HaloIpc() = default;
  /// One exchange of `direction` (0: forward, 1: adjoint), ordered on `stream` after its work so
  /// far (and after this direction's previous exchange). Returns once it is queued; its Work
  /// completes when the stream has run it.
  virtual Work exchange(int direction, StreamRef stream, const IpcRowWork& rows, OperationLabel label) = 0;
};

/// Collective over `comm` (mpi ranks on one node): allocates the outboxes and events, opens its
/// peers', and learns each incoming message's offset from its sender (host messages on the internal
/// tags from `first_tag`, `tag_slots` per direction). Throws Error(unsupported) in a build
/// without CUDA.
std::unique_ptr<HaloIpc> make_halo_ipc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions,
                                       int first_tag, int tag_slots, OperationLabel label);

}  // namespace meshcomm::detail
