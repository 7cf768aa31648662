#include "process_backend.hpp"

#include "perf_options.hpp"

namespace meshcomm::perf {

void add_process_backend_option(CommandLine& command_line, std::string& backend, bool several) {
  auto option = command_line.option("--backend", backend,
                                    several ? "mpi, ucx (MPI only starts the processes), or both side by side: mpi,ucx"
                                            : "mpi, or ucx (MPI only starts the processes)");
  option.show_default();
  if (!several) {
    option.one_of({"mpi", "ucx"});
    return;
  }
  option.check(
      [](const std::string& list) -> std::string {
        for (const auto& name : split_list(list)) {
          if (name != "mpi" && name != "ucx") return "'" + name + "' is not a backend; valid: mpi, ucx, or both";
        }
        return {};
      },
      "mpi|ucx[,...]");
}

BackendKind process_backend(const std::string& name) { return name == "ucx" ? BackendKind::ucx : BackendKind::mpi; }

std::vector<BackendKind> process_backends(const std::string& list) {
  std::vector<BackendKind> backends;
  for (const auto& name : split_list(list)) backends.push_back(process_backend(name));
  return backends;
}

}  // namespace meshcomm::perf
