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
//
// A sender on the receiver's host whose rows sit in its own mapped memory may instead skip the
// put and tell the receiver where they are (the adjoint, whose rows the receiver adds rather
// than copies): the receiver reads them straight from there as it adds, then says it is done,
// and the sender's exchange ends with that word (its rows must stay until then).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "communicator_impl.hpp"
#include "shared_memory/shared_segment.hpp"

namespace meshcomm::detail {

/// A message this rank puts into a peer's memory, or, with a `pull_handle`, offers for the peer
/// to read from this rank's segment (at `pull_offset`).
struct RmaOutgoing {
  int peer = 0;
  int slot = 0;
  const std::byte* source = nullptr;
  std::size_t bytes = 0;
  std::string pull_handle;
  std::size_t pull_offset = 0;
};

/// Where an incoming message's rows are once they have arrived: where its credit said, or, when
/// the sender offered them (`pulled`), in the sender's segment `handle` at `offset`.
struct RmaArrival {
  bool pulled = false;
  std::string handle;
  std::size_t offset = 0;
};

/// A message a peer puts into this rank's memory: at `offset` into the segment `handle` names.
struct RmaIncoming {
  int peer = 0;
  int slot = 0;
  std::size_t bytes = 0;
  std::string handle;
  std::size_t offset = 0;
};

/// What the receiver does with the arrived rows (one entry per incoming message, in order),
/// before the senders of offered rows hear that they are done.
using RmaConsume = std::function<void(const std::vector<RmaArrival>&)>;

/// Starts one exchange on `comm` (whose backend puts): credits, puts, notifications, `consume`,
/// and the done words for offered rows, on the internal tags [first_tag, first_tag + 3 *
/// tag_slots). Completes when this rank has consumed its incoming messages and its receivers
/// have every outgoing one.
std::shared_ptr<WorkState> start_rma_exchange(CommunicatorImpl& comm, std::vector<RmaOutgoing> out,
                                              std::vector<RmaIncoming> in, int first_tag, int tag_slots,
                                              OperationLabel label, RmaConsume consume);

}  // namespace meshcomm::detail
