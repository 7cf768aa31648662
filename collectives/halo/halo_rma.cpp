#include "halo_rma.hpp"

#include <cstring>

#include <fmt/format.h>

#include "internal_p2p.hpp"

namespace meshcomm::detail {

namespace {

/// Where a sender may put one message (the receiver's step 1).
struct Credit {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t handle_bytes = 0;
  std::uint32_t padding = 0;
  char handle[SegmentProvider::kMaxHandle] = {};
};

/// What one exchange keeps until it ends: the messages, the credits both ways, the notifications.
struct RmaExchange {
  std::vector<RmaOutgoing> out;
  std::vector<RmaIncoming> in;
  std::vector<Credit> given;     // one per incoming message
  std::vector<Credit> received;  // one per outgoing message
  std::uint64_t notification = 1;
  std::vector<std::uint64_t> notified;  // one per incoming message
};

std::vector<Work> give_and_take_credits(CommunicatorImpl& comm, RmaExchange& exchange, int first_tag,
                                        OperationLabel label) {
  std::vector<Work> works;
  for (std::size_t i = 0; i < exchange.in.size(); ++i) {
    const auto& message = exchange.in[i];
    auto& credit = exchange.given[i];
    credit.offset = message.offset;
    credit.bytes = message.bytes;
    credit.handle_bytes = static_cast<std::uint32_t>(message.handle.size());
    std::memcpy(credit.handle, message.handle.data(), message.handle.size());
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

std::vector<Work> put_messages(CommunicatorImpl& comm, const RmaExchange& exchange, OperationLabel label) {
  std::vector<Work> works;
  for (std::size_t i = 0; i < exchange.out.size(); ++i) {
    const auto& message = exchange.out[i];
    const auto& credit = exchange.received[i];
    if (credit.bytes != message.bytes || credit.handle_bytes > SegmentProvider::kMaxHandle) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("peer {} takes a halo message of {} bytes where this rank puts {}: the ranks' plans "
                              "disagree",
                              message.peer, credit.bytes, message.bytes),
                  comm.context(label, message.peer));
    }
    works.push_back(comm.make_work(comm.backend().put({message.source, message.bytes, DataType::u8, MemoryKind::host},
                                                      message.peer, std::string(credit.handle, credit.handle_bytes),
                                                      credit.offset, label)));
  }
  return works;
}

std::vector<Work> notify(CommunicatorImpl& comm, RmaExchange& exchange, int first_tag, OperationLabel label) {
  std::vector<Work> works;
  for (const auto& message : exchange.out) {
    works.push_back(send_bytes(comm, &exchange.notification, sizeof exchange.notification, message.peer,
                               first_tag + message.slot, label, MemoryKind::host));
  }
  for (std::size_t i = 0; i < exchange.in.size(); ++i) {
    works.push_back(recv_bytes(comm, &exchange.notified[i], sizeof(std::uint64_t), exchange.in[i].peer,
                               first_tag + exchange.in[i].slot, label, MemoryKind::host));
  }
  return works;
}

}  // namespace

std::shared_ptr<WorkState> start_rma_exchange(CommunicatorImpl& comm, std::vector<RmaOutgoing> out,
                                              std::vector<RmaIncoming> in, int first_tag, int tag_slots,
                                              OperationLabel label) {
  auto exchange = std::make_shared<RmaExchange>();
  exchange->given.resize(in.size());
  exchange->received.resize(out.size());
  exchange->notified.resize(in.size());
  exchange->out = std::move(out);
  exchange->in = std::move(in);
  return std::make_shared<ScheduleWorkState>(3, [&comm, exchange, first_tag, tag_slots, label](int step) {
    if (step == 0) return give_and_take_credits(comm, *exchange, first_tag, label);
    if (step == 1) return put_messages(comm, *exchange, label);
    return notify(comm, *exchange, first_tag + tag_slots, label);
  });
}

}  // namespace meshcomm::detail
