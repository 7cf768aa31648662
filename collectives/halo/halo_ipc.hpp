#pragma once

// Halo rows between processes that share a GPU, through CUDA IPC: each rank packs what it sends
// into an outbox of its own, and each receiver copies its rows straight out of the senders'
// outboxes (mapped into its process), told when to by small host messages. The mpi backend
// moves host memory only, so this is how a HaloPlan on CUDA memory runs on it.

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// One message as the IPC transport sees it.
struct IpcMessage {
  int peer = 0;
  int slot = 0;
  std::size_t offset = 0;  ///< out: where it starts in this rank's outbox
  std::size_t bytes = 0;
};

/// The messages of one direction of a plan (forward or adjoint).
struct IpcDirectionLayout {
  std::vector<IpcMessage> out;
  std::vector<IpcMessage> in;
  std::size_t out_bytes = 0;
};

/// The outboxes of a plan, its peers' outboxes opened here, and where each incoming message
/// starts in its sender's outbox.
class HaloIpc {
 public:
  virtual ~HaloIpc() = default;
  /// This rank's outbox for direction `direction` (0: forward, 1: adjoint), device memory.
  [[nodiscard]] virtual std::byte* outbox(int direction) const noexcept = 0;
  /// Where the `index`-th incoming message of `direction` starts, in its sender's outbox.
  [[nodiscard]] virtual const std::byte* source(int direction, std::size_t index) const noexcept = 0;
};

/// Collective over `comm` (mpi ranks on one node): allocates the outboxes, opens every sender's,
/// and learns each incoming message's offset from its sender (host messages on the internal
/// tags from `first_tag`, `tag_slots` per direction). Throws Error(unsupported) in a build
/// without CUDA.
std::unique_ptr<HaloIpc> make_halo_ipc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions,
                                       int first_tag, int tag_slots, OperationLabel label);

}  // namespace meshcomm::detail
