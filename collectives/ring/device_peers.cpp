#include "device_peers.hpp"

#include <cstring>

#include "device/cuda_check.hpp"
#include "setup_exchange.hpp"

namespace meshcomm::detail {

namespace {

/// Every rank's `mine`, gathered; the parts that each of `peers` offered, one after another.
template <class Item>
std::vector<Item> peers_items(CommunicatorImpl& comm, std::span<const Item> mine, std::span<const int> peers,
                              OperationLabel label) {
  const auto all = exchange_all_gather(comm, std::as_bytes(mine), label);
  std::vector<Item> items(mine.size() * peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    std::memcpy(items.data() + i * mine.size(), all.data() + static_cast<std::size_t>(peers[i]) * mine.size_bytes(),
                mine.size_bytes());
  }
  return items;
}


}  // namespace

DevicePeers::DevicePeers(CommunicatorImpl& comm, bool across_processes)
    : comm_(comm), across_processes_(across_processes) {}

DevicePeers::~DevicePeers() {
  for (auto* buffer : opened_buffers_) (void)cudaIpcCloseMemHandle(buffer);
  for (auto event : opened_events_) (void)cudaEventDestroy(event);
}

cudaEvent_t DevicePeers::new_event() const {
  cudaEvent_t event = nullptr;
  const unsigned flags = cudaEventDisableTiming | (across_processes_ ? cudaEventInterprocess : 0U);
  device::check_cuda(cudaEventCreateWithFlags(&event, flags), "cudaEventCreateWithFlags");
  return event;
}

std::vector<std::byte*> DevicePeers::open_buffers(std::span<std::byte* const> mine, int peer, OperationLabel label) {
  return open_buffers_of_each(mine, std::span(&peer, 1), label);
}

std::vector<std::byte*> DevicePeers::open_buffers_of_each(std::span<std::byte* const> mine,
                                                          std::span<const int> peers, OperationLabel label) {
  if (!across_processes_) return peers_items<std::byte*>(comm_, mine, peers, label);
  std::vector<cudaIpcMemHandle_t> handles(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    device::check_cuda(cudaIpcGetMemHandle(&handles[i], mine[i]), "cudaIpcGetMemHandle");
  }
  std::vector<std::byte*> theirs;
  for (const auto& handle : peers_items<cudaIpcMemHandle_t>(comm_, handles, peers, label)) {
    void* pointer = nullptr;
    device::check_cuda(cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess),
                       "cudaIpcOpenMemHandle (the ranks must share a node)");
    opened_buffers_.push_back(pointer);
    theirs.push_back(static_cast<std::byte*>(pointer));
  }
  return theirs;
}

std::vector<cudaEvent_t> DevicePeers::open_events(std::span<const cudaEvent_t> mine, int peer, OperationLabel label) {
  return open_events_of_each(mine, std::span(&peer, 1), label);
}

std::vector<cudaEvent_t> DevicePeers::open_events_of_each(std::span<const cudaEvent_t> mine,
                                                          std::span<const int> peers, OperationLabel label) {
  if (!across_processes_) return peers_items<cudaEvent_t>(comm_, mine, peers, label);
  std::vector<cudaIpcEventHandle_t> handles(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    device::check_cuda(cudaIpcGetEventHandle(&handles[i], mine[i]), "cudaIpcGetEventHandle");
  }
  std::vector<cudaEvent_t> theirs;
  for (const auto& handle : peers_items<cudaIpcEventHandle_t>(comm_, handles, peers, label)) {
    cudaEvent_t event = nullptr;
    device::check_cuda(cudaIpcOpenEventHandle(&event, handle), "cudaIpcOpenEventHandle");
    opened_events_.push_back(event);
    theirs.push_back(event);
  }
  return theirs;
}

}  // namespace meshcomm::detail
