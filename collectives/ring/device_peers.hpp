#pragma once

// Device buffers and events that neighbouring ranks use directly: plain pointers between the
// threads of one process (inproc), CUDA IPC handles between processes on one node (mpi).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <vector>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// What one rank opened of its peers' device objects, closed again on destruction.
class DevicePeers {
 public:
  /// `across_processes`: ranks are processes (CUDA IPC), not threads of this one.
  DevicePeers(CommunicatorImpl& comm, bool across_processes);
  DevicePeers(const DevicePeers&) = delete;
  DevicePeers& operator=(const DevicePeers&) = delete;
  ~DevicePeers();

  /// A new event that peers can wait on (interprocess where ranks are processes).
  [[nodiscard]] cudaEvent_t new_event() const;

  /// Collective: every rank offers `mine` (buffers from cudaMalloc); returns `peer`'s, usable here.
  std::vector<std::byte*> open_buffers(std::span<std::byte* const> mine, int peer, OperationLabel label);
  /// Collective: as open_buffers, those of each of `peers`, one peer's after another, usable
  /// here. Ranks may name different peers.
  std::vector<std::byte*> open_buffers_of_each(std::span<std::byte* const> mine, std::span<const int> peers,
                                               OperationLabel label);
  /// Collective: every rank offers `mine` (from new_event); returns `peer`'s, for waiting on.
  std::vector<cudaEvent_t> open_events(std::span<const cudaEvent_t> mine, int peer, OperationLabel label);
  /// Collective: as open_events, those of each of `peers`, one peer's after another. Ranks may
  /// name different peers.
  std::vector<cudaEvent_t> open_events_of_each(std::span<const cudaEvent_t> mine, std::span<const int> peers,
                                               OperationLabel label);

 private:
  CommunicatorImpl& comm_;
  bool across_processes_;
  std::vector<void*> opened_buffers_;
  std::vector<cudaEvent_t> opened_events_;
};

}  // namespace meshcomm::detail
