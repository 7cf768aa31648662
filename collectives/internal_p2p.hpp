#pragma once

#include <cstddef>

#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// Starts an internal-lane send of `bytes` bytes of `memory` at `data` (collectives move raw bytes).
inline Work send_bytes(CommunicatorImpl& comm, const void* data, std::size_t bytes, int peer, int tag,
                       OperationLabel label, MemoryKind memory) {
  return comm.make_work(
      comm.backend().isend({data, bytes, DataType::u8, memory}, peer, tag, Lane::internal, label, {}));
}

/// Starts an internal-lane receive of exactly `bytes` bytes of `memory` into `data`.
inline Work recv_bytes(CommunicatorImpl& comm, void* data, std::size_t bytes, int peer, int tag,
                       OperationLabel label, MemoryKind memory) {
  return comm.make_work(
      comm.backend().irecv({data, bytes, DataType::u8, memory}, peer, tag, Lane::internal, label, {}));
}

/// `pointer + offset` for untyped buffers.
inline std::byte* byte_offset(void* pointer, std::size_t offset) noexcept {
  return static_cast<std::byte*>(pointer) + offset;
}
inline const std::byte* byte_offset(const void* pointer, std::size_t offset) noexcept {
  return static_cast<const std::byte*>(pointer) + offset;
}

}  // namespace meshcomm::detail
