#include <fmt/format.h>

#include "../environment.hpp"
#include "meshcomm/bootstrap.hpp"
#include "meshcomm/env_bootstrap.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/pmix_bootstrap.hpp"

namespace meshcomm {

Bootstrap::~Bootstrap() = default;

std::string Bootstrap::description() const { return fmt::format("{}: rank {} of {}", name(), rank(), size()); }

std::unique_ptr<Bootstrap> Bootstrap::from_environment(std::chrono::milliseconds timeout) {
  const auto choice = detail::environment_variable("MESHCOMM_BOOTSTRAP").value_or("auto");
  if (choice == "env") return std::make_unique<EnvBootstrap>(timeout);
  if (choice == "pmix") return std::make_unique<PmixBootstrap>(timeout);
  if (choice != "auto") {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("MESHCOMM_BOOTSTRAP = '{}' is not a bootstrap; give env (torchrun's RANK, WORLD_SIZE, "
                            "MASTER_ADDR, MASTER_PORT), pmix (srun --mpi=pmix, prterun, mpirun) or auto",
                            choice),
                {.operation = "Bootstrap::from_environment"});
  }
  // torchrun's variables win: under srun or mpirun, a torchrun inside makes the processes that count.
  if (detail::environment_variable("RANK") && detail::environment_variable("WORLD_SIZE")) {
    return std::make_unique<EnvBootstrap>(timeout);
  }
  if (detail::environment_variable("PMIX_RANK") || detail::environment_variable("PMIX_NAMESPACE")) {
    return std::make_unique<PmixBootstrap>(timeout);
  }
  throw Error(ErrorCode::invalid_argument,
              "Bootstrap::from_environment: no launcher found: neither RANK and WORLD_SIZE (torchrun, accelerate "
              "launch) nor PMIX_RANK (srun --mpi=pmix, prterun, mpirun) is set; start the program with one of them, "
              "or set them yourself (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)",
              {.operation = "Bootstrap::from_environment"});
}

}  // namespace meshcomm
