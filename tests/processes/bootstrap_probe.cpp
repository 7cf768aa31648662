// One rank of a job started without MPI: takes the bootstrap its launcher calls for (or, with
// --caller DIR, a CallerBootstrap whose exchange is files in DIR), creates a communicator on its
// default backend, and checks an all-gather and an all-reduce over it. With --absent R, rank R
// never arrives (it sleeps past the others' timeout), and the others must fail naming it.
//   bootstrap_probe [--caller DIR] [--absent R]
// Prints "rank r: ok ..." or "rank r: error: ...", and exits 0 either way (the driver judges).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/caller_bootstrap.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace {

/// A request of the file exchange: which round, and where the gathered bytes go.
struct FileRequest {
  std::string round;
  std::span<std::byte> gathered;
  std::size_t bytes = 0;
};

/// A caller's exchange through files in a shared directory: each rank writes round.rank, then
/// reads every rank's file of that round once all exist.
meshcomm::CallerExchange file_exchange(const std::filesystem::path& directory, int rank, int size) {
  auto rounds = std::make_shared<int>(0);
  auto path = [directory](const std::string& round, int owner) {
    return directory / fmt::format("{}.{}", round, owner);
  };
  meshcomm::CallerExchange exchange{.rank = rank, .size = size};
  exchange.start_all_gather = [=](std::span<const std::byte> mine, std::span<std::byte> gathered) -> void* {
    auto* request = new FileRequest{fmt::format("round{}", (*rounds)++), gathered, mine.size()};
    const auto target = path(request->round, rank);
    {
      std::ofstream out(target.string() + ".partial", std::ios::binary);
      out.write(reinterpret_cast<const char*>(mine.data()), static_cast<std::streamsize>(mine.size()));
    }
    std::filesystem::rename(target.string() + ".partial", target);
    return request;
  };
  exchange.test = [=](void* opaque) {
    auto* request = static_cast<FileRequest*>(opaque);
    for (int owner = 0; owner < size; ++owner) {
      if (!std::filesystem::exists(path(request->round, owner))) return 0;
    }
    for (int owner = 0; owner < size; ++owner) {
      std::ifstream in(path(request->round, owner), std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.size() != request->bytes) return -1;
      std::memcpy(request->gathered.data() + static_cast<std::size_t>(owner) * request->bytes, bytes.data(),
                  bytes.size());
    }
    return 1;
  };
  exchange.release = [](void* opaque) { delete static_cast<FileRequest*>(opaque); };
  exchange.missing = [=](void* opaque) {
    std::vector<int> absent;
    for (int owner = 0; owner < size; ++owner) {
      if (!std::filesystem::exists(path(static_cast<FileRequest*>(opaque)->round, owner))) absent.push_back(owner);
    }
    return absent;
  };
  return exchange;
}

int environment_integer(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? -1 : std::atoi(value);
}

}  // namespace

int main(int argc, char** argv) {
  std::string caller_directory;
  int absent = -1;
  for (int index = 1; index + 1 < argc; index += 2) {
    const std::string option = argv[index];
    if (option == "--caller") caller_directory = argv[index + 1];
    if (option == "--absent") absent = std::atoi(argv[index + 1]);
  }
  int rank = environment_integer("RANK");
  try {
    std::unique_ptr<meshcomm::Bootstrap> bootstrap;
    if (caller_directory.empty()) {
      bootstrap = meshcomm::Bootstrap::from_environment();
    } else {
      bootstrap = std::make_unique<meshcomm::CallerBootstrap>(
          file_exchange(caller_directory, rank, environment_integer("WORLD_SIZE")));
    }
    rank = bootstrap->rank();
    std::printf("rank %d: bootstrap %s\n", rank, bootstrap->description().c_str());
    std::fflush(stdout);
    if (rank == absent) {
      // Never arrives: sleeps past the others' timeout (MESHCOMM_TIMEOUT, which the driver sets short).
      std::this_thread::sleep_for(std::chrono::seconds(8));
      std::printf("rank %d: absent on purpose\n", rank);
      return 0;
    }
    const auto started = std::chrono::steady_clock::now();
    auto comm = meshcomm::Communicator::create(*bootstrap);
    std::vector<int> mine{comm.rank(), 100 + comm.rank()};
    std::vector<int> gathered(mine.size() * static_cast<std::size_t>(comm.size()));
    comm.all_gather(mine, gathered).wait();
    for (int owner = 0; owner < comm.size(); ++owner) {
      if (gathered[2 * owner] != owner || gathered[2 * owner + 1] != 100 + owner) {
        std::printf("rank %d: error: wrong all_gather result %s\n", rank, fmt::format("{}", gathered).c_str());
        return 0;
      }
    }
    std::vector<double> sum{static_cast<double>(comm.rank() + 1)};
    comm.all_reduce(sum, sum).wait();
    const double expected = comm.size() * (comm.size() + 1) / 2.0;
    if (sum[0] != expected) {
      std::printf("rank %d: error: all_reduce gave %g, expected %g\n", rank, sum[0], expected);
      return 0;
    }
    comm.barrier();
    std::printf("rank %d: ok: %s backend, %d ranks, all_gather and all_reduce exact (%.0f ms)\n", rank,
                std::string(meshcomm::to_string(comm.backend())).c_str(), comm.size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  } catch (const meshcomm::Error& error) {
    std::printf("rank %d: error: %s\n", rank, error.what());
  }
  return 0;
}
