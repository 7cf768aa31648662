#include "halo_rma.hpp"

#include <fmt/format.h>

#include "internal_p2p.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

namespace {

/// Where a sender may put one message (the receiver's step 1).
struct Credit {
  std::uint64_t bytes = 0;
  SegmentReference where;
};

/// What a sender tells its receiver once the rows are there: nothing more (a put: `where` is
/// empty), or where to read them (offered rows).
using Notification = Credit;

/// What one exchange keeps until it ends: the messages, the credits both ways, the
/// notifications both ways, and the done words of offered rows.
struct RmaExchange {
  std::vector<RmaOutgoing> out;
  std::vector<RmaIncoming> in;
  std::vector<Credit> given;     // one per incoming message
  std::vector<Credit> received;  // one per outgoing message
  std::vector<Notification> notifications;  // one per outgoing message
  std::vector<Notification> notified;       // one per incoming message
  std::uint64_t done = 1;
  std::vector<std::uint64_t> done_words;  // one per outgoing message
  RmaConsume consume;
};


WorkList give_and_take_credits(CommunicatorImpl& comm, RmaExchange& exchange, int first_tag,
                                        OperationLabel label) {
  WorkList works;
  for (std::size_t i = 0; i < exchange.in.size(); ++i) {
    const auto& message = exchange.in[i];
    auto& credit = exchange.given[i];
    credit = {.bytes = message.bytes, .where = SegmentReference::of({message.handle, message.offset})};
    works.push_back(send_bytes(comm, &credit, sizeof credit, message.peer, first_tag + message.slot, label,
                               MemoryKind::host));
  }
  for (std::size_t i = 0; i < exchange.out.size(); ++i) {
    const auto& message = exchange.out[i];
    works.push_back(recv_bytes(comm, &exchange.received[i], sizeof(Credit), message.peer, first_tag + message.slot,
                               label, MemoryKind::host));
  }
  return works;
}

WorkList put_messages(CommunicatorImpl& comm, const RmaExchange& exchange, OperationLabel label) {
  WorkList works;
  for (std::size_t i = 0; i < exchange.out.size(); ++i) {
    const auto& message = exchange.out[i];
    const auto& credit = exchange.received[i];
    if (!message.pull_handle.empty()) continue;  // offered: the receiver reads the rows itself
    if (credit.bytes != message.bytes) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("peer {} takes a halo message of {} bytes where this rank puts {}: the ranks' plans "
                              "disagree",
                              message.peer, credit.bytes, message.bytes),
                  comm.context(label, message.peer));
    }
    const auto target = credit.where.location();
    works.push_back(comm.make_work(comm.backend().put({message.source, message.bytes, DataType::u8, MemoryKind::host},
                                                      message.peer, target.handle, target.offset, label)));
  }
  return works;
}

WorkList notify(CommunicatorImpl& comm, RmaExchange& exchange, int first_tag, OperationLabel label) {
  WorkList works;
  for (std::size_t i = 0; i < exchange.out.size(); ++i) {
    const auto& message = exchange.out[i];
    exchange.notifications[i] = {.bytes = message.bytes,
                                 .where = message.pull_handle.empty()
                                              ? SegmentReference{}
                                              : SegmentReference::of({message.pull_handle, message.pull_offset})};
    works.push_back(send_bytes(comm, &exchange.notifications[i], sizeof(Notification), message.peer,
                               first_tag + message.slot, label, MemoryKind::host));
  }
  for (std::size_t i = 0; i < exchange.in.size(); ++i) {
    works.push_back(recv_bytes(comm, &exchange.notified[i], sizeof(Notification), exchange.in[i].peer,
                               first_tag + exchange.in[i].slot, label, MemoryKind::host));
  }
  return works;
}

/// Consumes the arrived rows, then tells the senders of offered rows that they may reuse them
/// (and waits to hear the same from the receivers of this rank's offered rows).
WorkList consume_and_release(CommunicatorImpl& comm, RmaExchange& exchange, int first_tag,
                                      OperationLabel label) {
  std::vector<RmaArrival> arrivals;
  for (const auto& notification : exchange.notified) {
    const auto offered = notification.where.location();
    arrivals.push_back({!notification.where.empty(), offered.handle, offered.offset});
  }
  exchange.consume(arrivals);
  WorkList works;
  for (std::size_t i = 0; i < exchange.in.size(); ++i) {
    if (!arrivals[i].pulled) continue;
    works.push_back(send_bytes(comm, &exchange.done, sizeof exchange.done, exchange.in[i].peer,
                               first_tag + exchange.in[i].slot, label, MemoryKind::host));
  }
  for (std::size_t i = 0; i < exchange.out.size(); ++i) {
    if (exchange.out[i].pull_handle.empty()) continue;
    works.push_back(recv_bytes(comm, &exchange.done_words[i], sizeof(std::uint64_t), exchange.out[i].peer,
                               first_tag + exchange.out[i].slot, label, MemoryKind::host));
  }
  return works;
}

}  // namespace

std::shared_ptr<WorkState> start_rma_exchange(CommunicatorImpl& comm, std::vector<RmaOutgoing> out,
                                              std::vector<RmaIncoming> in, int first_tag, int tag_slots,
                                              OperationLabel label, RmaConsume consume) {
  auto exchange = make_recycled<RmaExchange>();
  exchange->given.resize(in.size());
  exchange->received.resize(out.size());
  exchange->notifications.resize(out.size());
  exchange->notified.resize(in.size());
  exchange->done_words.resize(out.size());
  exchange->out = std::move(out);
  exchange->in = std::move(in);
  exchange->consume = std::move(consume);
  return make_schedule(4, [&comm, exchange, first_tag, tag_slots, label](int step) {
    if (step == 0) return give_and_take_credits(comm, *exchange, first_tag, label);
    if (step == 1) return put_messages(comm, *exchange, label);
    if (step == 2) return notify(comm, *exchange, first_tag + tag_slots, label);
    return consume_and_release(comm, *exchange, first_tag + 2 * tag_slots, label);
  });
}

}  // namespace meshcomm::detail
