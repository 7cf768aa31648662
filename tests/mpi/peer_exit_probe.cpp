// A peer that vanishes: rank 1 exits right after the communicator is created, without MPI_Finalize.
// Rank 0's operation on it (argv[1]: "receive", "ring" for a ring all-gather, "native" for Open
// MPI's own of a shape not yet agreed, "native_agreed" for one whose shape both ranks called
// before rank 1 left, "eager" for a small all-gather through the shared slots, "eager_read" for
// a large one whose payloads stay in the ranks' buffers, rank 1's published before it left,
// "eager_lent" for the same with rank 1 alive while rank 0 reads its payload but gone before it
// reads rank 0's, "barrier") must end in peer_failure naming rank 1, well before the timeout, since rank 1's
// process is seen to have ended; and rank 0 must then leave too: its MpiSession's MPI_Finalize
// would wait for rank 1 forever, so it ends the process after the timeout, saying why. Run under
// `mpirun --mca orte_abort_on_non_zero_status 0 -np 2`; ctest checks what rank 0 printed (a hang
// fails by ctest's timeout).

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>
#include <vector>

#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mpi_bootstrap.hpp"

int main(int argc, char** argv) {
  meshcomm::MpiSession session(argc, argv);
  const std::string_view mode = argc > 1 ? argv[1] : "receive";
  meshcomm::MpiBootstrap bootstrap;
  // argv[2] "ucx": the ucx backend, whose endpoints report the failed peer.
  const bool on_ucx = argc > 2 && std::string_view(argv[2]) == "ucx";
  auto comm = meshcomm::Communicator::create(
      bootstrap, {.backend = on_ucx ? meshcomm::BackendKind::ucx : meshcomm::BackendKind::automatic});
  std::vector<float> incoming(4), shard(4, 1.0F), gathered(4 * static_cast<std::size_t>(comm.size()));
  const bool agreed = mode == "native_agreed";
  if (agreed) comm.all_gather(std::span<const float>(shard), std::span(gathered), {.algorithm = "native"}).wait();
  // Every rank has finished connecting before rank 1 leaves (a peer lost while connecting is a
  // creation error, not what this probe looks at).
  comm.barrier();
  // "eager_read": rank 1 publishes a large all-gather's payload (past a slot's, so it is left in
  // its buffer for rank 0 to read whatever was measured), and leaves before rank 0 arrives to
  // read it. "eager_lent": rank 1 stays (without driving its operation) while rank 0 arrives and
  // reads it, then leaves, so that rank 0 waits for a reader that never comes.
  const bool eager_read = mode == "eager_read";
  const bool eager_lent = mode == "eager_lent";
  std::vector<float> large(32768, 1.0F), large_gathered(large.size() * static_cast<std::size_t>(comm.size()));
  auto gather_large = [&] {
    return comm.all_gather(std::span<const float>(large), std::span(large_gathered), {.algorithm = "eager"});
  };
  if (comm.rank() == 1) {
    if (eager_read || eager_lent) auto unfinished = gather_large();
    if (eager_lent) std::this_thread::sleep_for(std::chrono::milliseconds(600));
    _exit(3);
  }
  if (comm.rank() != 0) return 0;
  if (eager_read || eager_lent) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto started = std::chrono::steady_clock::now();
  try {
    if (mode == "receive") {
      comm.irecv(incoming, 1, 5).wait();
    } else if (mode == "barrier") {
      comm.barrier();
    } else if (eager_read || eager_lent) {
      gather_large().wait();
    } else {
      const std::string_view algorithm = agreed ? "native" : mode;
      comm.all_gather(std::span<const float>(shard), std::span(gathered), {.algorithm = algorithm}).wait();
    }
    std::printf("rank 0: the %s with the vanished peer completed\n", argv[1]);
  } catch (const meshcomm::Error& error) {
    std::printf("rank 0: %s\n", error.what());
  }
  const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("rank 0: the %.*s failed after %.2f s of a %lld s timeout\n", static_cast<int>(mode.size()),
              mode.data(), waited, static_cast<long long>(comm.timeout().count() / 1000));
  std::printf("rank 0: leaving main\n");
  std::fflush(stdout);
  return 0;
}
