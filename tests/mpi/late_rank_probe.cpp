// A rank that arrives after the others gave up: rank 1 sleeps past the timeout before
// Communicator::create (`create`) or before a split (`split`). Every rank must report an error
// and go on; none may wait forever in an MPI call that cannot time out. Prints one line per rank:
// "rank R: error: <what>" or "rank R: <step> succeeded". Rank 1 then creates the file named by
// the third argument, for which rank 0 waits before its session ends the job.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  const std::string step = argc > 1 ? argv[1] : "create";
  const unsigned late_seconds = argc > 2 ? static_cast<unsigned>(std::stoi(argv[2])) : 4;
  const std::filesystem::path reported = argc > 3 ? argv[3] : "late_rank_reported";
  meshcomm::MpiBootstrap bootstrap;
  const int rank = bootstrap.rank();
  try {
    if (step == "create" && rank == 1) sleep(late_seconds);
    auto world = meshcomm::Communicator::create(bootstrap);
    if (step == "split") {
      if (rank == 1) sleep(late_seconds);
      auto half = world.split(0, world.rank());
    }
    std::printf("rank %d: %s succeeded\n", rank, step.c_str());
  } catch (const meshcomm::Error& error) {
    std::printf("rank %d: error: %s\n", rank, error.what());
  }
  std::fflush(stdout);
  // The early rank waits for the late one to report (at most its lateness and 6 s more) before
  // its session ends the job.
  if (rank == 1) std::ofstream{reported} << "reported\n";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(late_seconds + 6);
  while (rank == 0 && !std::filesystem::exists(reported) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}
