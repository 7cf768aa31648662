#include "halo_ipc.hpp"

#include <algorithm>
#include <set>

#include "device/device_runtime.hpp"
#include "internal_p2p.hpp"
#include "ring/device_peers.hpp"

namespace meshcomm::detail {

namespace {

class DeviceHaloIpc final : public HaloIpc {
 public:
  DeviceHaloIpc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions, int first_tag,
                int tag_slots, OperationLabel label)
      : peers_(comm, /*across_processes=*/true) {
    // Senders: everyone this rank receives from, in either direction.
    std::set<int> senders;
    for (const auto& direction : directions) {
      for (const auto& message : direction.in) senders.insert(message.peer);
    }
    const std::vector<int> sender_list(senders.begin(), senders.end());
    for (int d = 0; d < 2; ++d) {
      outboxes_[d] = static_cast<std::byte*>(device::allocate(std::max<std::size_t>(directions[d].out_bytes, 1)));
      const auto opened = peers_.open_buffer_of_each(outboxes_[d], sender_list, label);
      std::vector<const std::byte*> of_rank(static_cast<std::size_t>(comm.size()), nullptr);
      for (std::size_t i = 0; i < sender_list.size(); ++i) of_rank[sender_list[i]] = opened[i];
      // Each sender tells each receiver where its message starts.
      std::vector<std::uint64_t> told(directions[d].out.size());
      std::vector<std::uint64_t> heard(directions[d].in.size());
      std::vector<Work> works;
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
        sources_[d].push_back(of_rank[directions[d].in[i].peer] + heard[i]);
      }
    }
  }

  ~DeviceHaloIpc() override {
    for (auto* outbox : outboxes_) device::release(outbox);
  }

  [[nodiscard]] std::byte* outbox(int direction) const noexcept override { return outboxes_[direction]; }
  [[nodiscard]] const std::byte* source(int direction, std::size_t index) const noexcept override {
    return sources_[direction][index];
  }

 private:
  DevicePeers peers_;
  std::byte* outboxes_[2] = {nullptr, nullptr};
  std::vector<const std::byte*> sources_[2];
};

}  // namespace

std::unique_ptr<HaloIpc> make_halo_ipc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& directions,
                                       int first_tag, int tag_slots, OperationLabel label) {
  return std::make_unique<DeviceHaloIpc>(comm, directions, first_tag, tag_slots, label);
}

}  // namespace meshcomm::detail
