#pragma once

// CUDA streams as meshcomm's StreamRef. Include it from CUDA code only: it needs the CUDA
// runtime's headers (and meshcomm built with MESHCOMM_WITH_CUDA for CUDA memory to be accepted).
//
//   cudaStream_t stream = ...;
//   comm.all_gather(ConstBufferView(shard, n, DataType::bf16, MemoryKind::cuda),
//                   BufferView(full, n * comm.size(), DataType::bf16, MemoryKind::cuda),
//                   {.stream = meshcomm::stream_ref(stream)});
//
// On the nccl backend the call is queued on the stream: later work on it sees the result, and
// `Work::wait()` also blocks the host until it is done. On the host-driven backends (inproc,
// mpi) the call first waits for the stream's earlier work, and the result is complete when the
// Work is.

#include <cuda_runtime_api.h>

#include "meshcomm/stream.hpp"

namespace meshcomm {

/// A StreamRef for `stream` (not owned).
inline StreamRef stream_ref(cudaStream_t stream) noexcept { return StreamRef(static_cast<void*>(stream)); }

/// The CUDA stream behind `stream` (nullptr: the legacy default stream).
inline cudaStream_t cuda_stream(StreamRef stream) noexcept {
  return static_cast<cudaStream_t>(stream.native_handle());
}

}  // namespace meshcomm
