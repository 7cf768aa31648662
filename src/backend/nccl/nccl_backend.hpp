#pragma once

#include <chrono>
#include <memory>

#include "../backend.hpp"

namespace meshcomm {
class Bootstrap;
}

namespace meshcomm::detail {

/// The nccl backend: CUDA memory moves through an NCCL communicator (grouped ncclSend/ncclRecv
/// for meshcomm's algorithms, NCCL's own collectives as `native`), queued on the caller's stream;
/// host memory (setup exchanges, barriers, user messages on host buffers) moves through `host`,
/// the bootstrap's own backend. One rank per GPU, as NCCL requires.
std::unique_ptr<Backend> make_nccl_backend(Bootstrap& bootstrap, std::unique_ptr<Backend> host,
                                           std::chrono::milliseconds timeout);

}  // namespace meshcomm::detail
