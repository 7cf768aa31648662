#pragma once

#include <functional>

#include "meshcomm/communicator.hpp"

namespace meshcomm::perf {

/// Runs `body` on `ranks` ranks as threads of this process (an in-process world; on CUDA memory
/// they share one CUDA context, so their kernels and copies can run at once). Rethrows, once
/// every thread has ended, an Error naming each rank that failed and why.
void run_as_threads(int ranks, const std::function<void(Communicator&)>& body);

}  // namespace meshcomm::perf
