#pragma once

// Halo rows put straight into the receivers' memory (strategy rma, on a backend with one-sided
// puts: ucx). Exchange k between a sender and a receiver:
//
//   1. the receiver, as it starts exchange k, sends a credit: where the message may land (a
//      segment handle and an offset: its extended buffer where that came from allocate_shared,
//      else the plan's inbox). Rows it still reads from exchange k-1 are never overwritten,
//      since no credit for them exists before it starts k;
//   2. the sender puts the rows there and flushes the endpoint (the bytes are in place);
//   3. the sender sends a small notification; the receiver's exchange ends when it has every
//      notification (and the senders' with every notification sent).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "communicator_impl.hpp"
#include "shared_memory/shared_segment.hpp"

namespace meshcomm::detail {

/// A message this rank puts into a peer's memory.
struct RmaOutgoing {
  int peer = 0;
  int slot = 0;
  const std::byte* source = nullptr;
  std::size_t bytes = 0;
};

/// A message a peer puts into this rank's memory: at `offset` into the segment `handle` names.
struct RmaIncoming {
  int peer = 0;
  int slot = 0;
  std::size_t bytes = 0;
  std::string handle;
  std::size_t offset = 0;
};

/// Starts one exchange on `comm` (whose backend puts): credits, puts, notifications, on the
/// internal tags [first_tag, first_tag + 2 * tag_slots). Completes when every incoming message is
/// in place and every outgoing one is in place at its receiver.
std::shared_ptr<WorkState> start_rma_exchange(CommunicatorImpl& comm, std::vector<RmaOutgoing> out,
                                              std::vector<RmaIncoming> in, int first_tag, int tag_slots,
                                              OperationLabel label);

}  // namespace meshcomm::detail
