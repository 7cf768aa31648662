#include <fmt/format.h>

#include "../communicator_impl.hpp"
#include "inproc/inproc_backend.hpp"
#include "inproc/inproc_world.hpp"
#include "meshcomm/bootstrap.hpp"
#include "meshcomm/config.hpp"

#if MESHCOMM_HAVE_MPI
#include "meshcomm/mpi_bootstrap.hpp"
#include "mpi/mpi_backend.hpp"
#endif
#if MESHCOMM_HAVE_NCCL
#include "nccl/nccl_backend.hpp"
#endif
#if MESHCOMM_HAVE_UCX
#include "ucx/ucx_backend.hpp"
#endif

namespace meshcomm::detail {

namespace {

Error unavailable(BackendKind kind, std::string_view why) {
  return Error(ErrorCode::unsupported,
               fmt::format("backend '{}' {}; backends in this build: inproc{}{}{}", to_string(kind), why,
                           MESHCOMM_HAVE_MPI ? ", mpi" : "", MESHCOMM_HAVE_UCX ? ", ucx" : "",
                           MESHCOMM_HAVE_NCCL ? ", nccl" : ""),
               {.backend = std::string(to_string(kind)), .operation = "Communicator::create"});
}

/// inproc for threads, mpi for an MpiBootstrap, ucx (where built) for processes met any other way.
BackendKind backend_for(const Bootstrap& bootstrap) {
  if (bootstrap.name() == "inproc") return BackendKind::inproc;
  if (bootstrap.name() == "mpi") return BackendKind::mpi;
  if (MESHCOMM_HAVE_UCX) return BackendKind::ucx;
  throw Error(ErrorCode::unsupported,
              fmt::format("no backend for a '{}' bootstrap in this build: its processes talk through the ucx backend "
                          "(configure where libucx-dev is found, MESHCOMM_WITH_UCX=ON), or start the job with mpirun "
                          "and an MpiBootstrap",
                          bootstrap.name()),
              {.operation = "Communicator::create"});
}

}  // namespace

std::unique_ptr<Backend> create_backend(Bootstrap& bootstrap, BackendKind kind,
                                        [[maybe_unused]] std::chrono::milliseconds timeout) {
  if (kind == BackendKind::automatic) kind = backend_for(bootstrap);
  switch (kind) {
    case BackendKind::inproc: {
      auto* in_process = dynamic_cast<InProcessBootstrap*>(&bootstrap);
      if (in_process == nullptr) throw unavailable(kind, "needs an InProcessBootstrap (ranks as threads)");
      return std::make_unique<InprocBackend>(in_process->world()->impl().next_root_group(in_process->rank()),
                                             in_process->rank(), in_process->size());
    }
    case BackendKind::mpi: {
#if MESHCOMM_HAVE_MPI
      auto* mpi = dynamic_cast<MpiBootstrap*>(&bootstrap);
      if (mpi == nullptr) throw unavailable(kind, "needs an MpiBootstrap");
      // Every rank should be here; the barrier and the duplications after it each wait at most
      // the timeout, so a rank that arrives after the others gave up fails too instead of waiting.
      mpi->barrier();
      return make_mpi_backend(mpi->comm(), timeout);
#else
      throw unavailable(kind, "is not in this build (configured with MESHCOMM_WITH_MPI=OFF)");
#endif
    }
    case BackendKind::nccl: {
#if MESHCOMM_HAVE_NCCL
      // Host memory (setup, barriers) moves through the bootstrap's own backend.
      return make_nccl_backend(bootstrap, create_backend(bootstrap, BackendKind::automatic, timeout), timeout);
#else
      throw unavailable(kind, "is not in this build (configure where CUDA and NCCL are found, MESHCOMM_WITH_NCCL=ON)");
#endif
    }
    case BackendKind::ucx: {
#if MESHCOMM_HAVE_UCX
      // One rank per process: the worker's tag matching is process-wide.
      if (bootstrap.name() == "inproc") throw unavailable(kind, "needs one rank per process, not ranks as threads");
      bootstrap.barrier();
      return make_ucx_backend(bootstrap, timeout);
#else
      throw unavailable(kind, "is not in this build (configure where libucx-dev is found, MESHCOMM_WITH_UCX=ON)");
#endif
    }
    case BackendKind::automatic: break;
  }
  throw unavailable(kind, "is unknown");
}

}  // namespace meshcomm::detail
