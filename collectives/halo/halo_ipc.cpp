#include "halo_ipc.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "device/cuda_check.hpp"
#include "device/device_runtime.hpp"
#include "device/event_work.hpp"
#include "internal_p2p.hpp"
#include "ring/device_peers.hpp"

namespace meshcomm::detail {

namespace {

/// Distinct peers of `messages`, ascending.
std::vector<int> distinct_peers(const std::vector<IpcMessage>& messages) {
  std::set<int> peers;
  for (const auto& message : messages) peers.insert(message.peer);
  return {peers.begin(), peers.end()};
}

class DeviceHaloIpc final : public HaloIpc {
 public:
  DeviceHaloIpc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions, int first_tag,
                int tag_slots, OperationLabel label)
      : comm_(comm), peers_(comm, /*across_processes=*/true) {
    for (int d = 0; d < 2; ++d) {
      auto& side = sides_[d];
      side.senders = distinct_peers(directions[d].in);
      side.receivers = distinct_peers(directions[d].out);
      side.outbox = static_cast<std::byte*>(device::allocate(std::max<std::size_t>(directions[d].out_bytes, 1)));
      side.ready = peers_.new_event();
      side.pulled = peers_.new_event();
      for (const auto& message : directions[d].in) side.in_bytes.push_back(message.bytes);
    }
    // Every rank offers its outboxes and events; each opens what it needs of its peers.
    std::set<int> all_peers;
    for (const auto& side : sides_) {
      all_peers.insert(side.senders.begin(), side.senders.end());
      all_peers.insert(side.receivers.begin(), side.receivers.end());
    }
    const std::vector<int> peer_list(all_peers.begin(), all_peers.end());
    std::byte* const outboxes[2] = {sides_[0].outbox, sides_[1].outbox};
    const cudaEvent_t events[4] = {sides_[0].ready, sides_[0].pulled, sides_[1].ready, sides_[1].pulled};
    const auto their_outboxes = peers_.open_buffers_of_each(outboxes, peer_list, label);
    const auto their_events = peers_.open_events_of_each(events, peer_list, label);
    auto index_of = [&](int peer) {
      return static_cast<std::size_t>(std::lower_bound(peer_list.begin(), peer_list.end(), peer) - peer_list.begin());
    };
    for (int d = 0; d < 2; ++d) {
      auto& side = sides_[d];
      for (int sender : side.senders) side.sender_ready.push_back(their_events[index_of(sender) * 4 + 2 * d]);
      for (int receiver : side.receivers) {
        side.receiver_pulled.push_back(their_events[index_of(receiver) * 4 + 2 * d + 1]);
      }
      // Each sender tells each receiver where its message starts in the sender's outbox.
      std::vector<std::uint64_t> told(directions[d].out.size());
      std::vector<std::uint64_t> heard(directions[d].in.size());
      WorkList works;
      for (std::size_t i = 0; i < directions[d].in.size(); ++i) {
        const auto& message = directions[d].in[i];
        works.push_back(recv_bytes(comm, &heard[i], sizeof heard[i], message.peer,
                                   first_tag + d * tag_slots + message.slot, label, MemoryKind::host));
      }
      for (std::size_t i = 0; i < directions[d].out.size(); ++i) {
        const auto& message = directions[d].out[i];
        told[i] = message.offset;
        works.push_back(send_bytes(comm, &told[i], sizeof told[i], message.peer,
                                   first_tag + d * tag_slots + message.slot, label, MemoryKind::host));
      }
      for (auto& work : works) work.wait(comm.timeout());
      for (std::size_t i = 0; i < directions[d].in.size(); ++i) {
        side.sources.push_back(their_outboxes[index_of(directions[d].in[i].peer) * 2 + d] + heard[i]);
      }
    }
  }

  /// The receivers may still be reading the outboxes: wait (bounded by the timeout) until their
  /// reads have run before freeing them. Errors cannot leave a destructor.
  ~DeviceHaloIpc() override {
    for (auto& side : sides_) {
      try {
        for (auto& work : side.pulled_pending) work.wait(comm_.timeout());
        for (auto& work : side.sends_pending) work.wait(comm_.timeout());
      } catch (const Error&) {
      }
      if (side.steps > 0) {
        for (auto event : side.receiver_pulled) (void)cudaEventSynchronize(event);
      }
      (void)cudaEventSynchronize(side.pulled);
    }
    for (auto& side : sides_) {
      device::release(side.outbox);
      (void)cudaEventDestroy(side.ready);
      (void)cudaEventDestroy(side.pulled);
    }
  }

  Work exchange(int direction, StreamRef stream, const IpcRowWork& rows, OperationLabel label) override {
    auto& side = sides_[direction];
    const auto queue = static_cast<cudaStream_t>(stream.native_handle());
    // The receivers have queued their reads of the previous exchange, and our sends are done.
    for (std::size_t j = 0; j < side.pulled_pending.size(); ++j) {
      side.pulled_pending[j].wait(comm_.timeout());
      expect_step(side.pulled_heard[j], side.steps - 1, "pulled", side.receivers[j], label);
    }
    side.pulled_pending.clear();
    for (auto& work : side.sends_pending) work.wait(comm_.timeout());
    side.sends_pending.clear();
    if (side.steps > 0) {
      // Behind the receivers' reads of the outbox, and this direction's previous exchange.
      for (auto event : side.receiver_pulled) wait_event(queue, event);
      wait_event(queue, side.pulled);
    }
    rows.pack(side.outbox);
    device::check_cuda(cudaEventRecord(side.ready, queue), "cudaEventRecord");
    const int tag = comm_.reserve_internal_tags(2);
    side.ready_payload = side.steps;
    for (int receiver : side.receivers) {
      side.sends_pending.push_back(send_bytes(comm_, &side.ready_payload, sizeof side.ready_payload, receiver, tag,
                                              label, MemoryKind::host));
    }
    // The senders' outboxes are packed (or will be, in their streams' order).
    std::vector<std::int64_t> ready_heard(side.senders.size(), -1);
    WorkList ready_in;
    for (std::size_t i = 0; i < side.senders.size(); ++i) {
      ready_in.push_back(recv_bytes(comm_, &ready_heard[i], sizeof ready_heard[i], side.senders[i], tag, label,
                                    MemoryKind::host));
    }
    for (std::size_t i = 0; i < ready_in.size(); ++i) {
      ready_in[i].wait(comm_.timeout());
      expect_step(ready_heard[i], side.steps, "ready", side.senders[i], label);
    }
    for (auto event : side.sender_ready) wait_event(queue, event);
    for (std::size_t i = 0; i < side.sources.size(); ++i) {
      device::check_cuda(cudaMemcpyAsync(rows.target(i), side.sources[i], side.in_bytes[i], cudaMemcpyDeviceToDevice,
                                         queue),
                         "cudaMemcpyAsync (halo rows through CUDA IPC)");
    }
    rows.unpack();
    device::check_cuda(cudaEventRecord(side.pulled, queue), "cudaEventRecord");
    side.pulled_payload = side.steps;
    for (int sender : side.senders) {
      side.sends_pending.push_back(send_bytes(comm_, &side.pulled_payload, sizeof side.pulled_payload, sender,
                                              tag + 1, label, MemoryKind::host));
    }
    side.pulled_heard.assign(side.receivers.size(), -1);
    for (std::size_t j = 0; j < side.receivers.size(); ++j) {
      side.pulled_pending.push_back(recv_bytes(comm_, &side.pulled_heard[j], sizeof side.pulled_heard[j],
                                               side.receivers[j], tag + 1, label, MemoryKind::host));
    }
    ++side.steps;
    return comm_.make_work(
        std::make_shared<EventWork>(side.pulled, comm_.context(label), "the halo exchange's device copies"));
  }

 private:
  /// One direction's outbox, events, peers and signals.
  struct Side {
    std::vector<int> senders;    // distinct peers this rank receives from
    std::vector<int> receivers;  // distinct peers this rank sends to
    std::byte* outbox = nullptr;
    cudaEvent_t ready = nullptr;   // recorded after packing
    cudaEvent_t pulled = nullptr;  // recorded after reading the senders' outboxes and unpacking
    std::vector<cudaEvent_t> sender_ready;     // per sender
    std::vector<cudaEvent_t> receiver_pulled;  // per receiver
    std::vector<const std::byte*> sources;     // per incoming message, in its sender's outbox
    std::vector<std::size_t> in_bytes;         // per incoming message
    std::int64_t steps = 0;
    std::int64_t ready_payload = 0;  // signal payloads: they must outlive their messages
    std::int64_t pulled_payload = 0;
    std::vector<std::int64_t> pulled_heard;
    WorkList pulled_pending;  // the receivers' "pulled" of the last exchange
    WorkList sends_pending;
  };

  static void wait_event(cudaStream_t queue, cudaEvent_t event) {
    device::check_cuda(cudaStreamWaitEvent(queue, event, 0), "cudaStreamWaitEvent");
  }

  void expect_step(std::int64_t got, std::int64_t expected, const char* signal, int peer, OperationLabel label) const {
    if (got == expected) return;
    throw Error(ErrorCode::internal,
                fmt::format("halo {} signal for exchange {} arrived at exchange {}: the ranks' HaloPlan calls are "
                            "out of step",
                            signal, got, expected),
                comm_.context(label, peer));
  }

  CommunicatorImpl& comm_;
  DevicePeers peers_;
  Side sides_[2];
};

}  // namespace

std::unique_ptr<HaloIpc> make_halo_ipc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions,
                                       int first_tag, int tag_slots, OperationLabel label) {
  return std::make_unique<DeviceHaloIpc>(comm, directions, first_tag, tag_slots, label);
}

}  // namespace meshcomm::detail
