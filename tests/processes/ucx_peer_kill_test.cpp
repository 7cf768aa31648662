// A peer SIGKILLed in the middle of a receive, on the ucx backend: the test forks the processes
// itself, so that no launcher ends the survivor first (nor reaps the killed one: UCX's keepalive
// takes a zombie for alive). The survivor's receive must fail with peer_failure naming the killed
// rank, not with a timeout.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "harness/fork_bootstrap.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {
namespace {

constexpr std::chrono::milliseconds kTimeout{30000};  // far beyond the 1 s keepalive

TEST(UcxPeerKill, SurvivorNamesTheKilledPeer) {
  auto world = ForkWorld::create(2);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // (never returns: killed by the parent, or by the Reaper below)
    // Rank 1: connects, says so, and waits to be killed.
    ForkBootstrap bootstrap(world, 1);
    auto comm = Communicator::create(bootstrap, {.backend = BackendKind::ucx, .timeout = kTimeout});
    comm.barrier();
    const char byte = 'r';
    (void)!write(ready[1], &byte, 1);
    while (true) pause();
  }
  // Whatever happens below, the child does not outlive the test.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  };
  Reaper reaper{child};
  ForkBootstrap bootstrap(world, 0);
  auto comm = Communicator::create(bootstrap, {.backend = BackendKind::ucx, .timeout = kTimeout});
  comm.barrier();
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  std::vector<float> incoming(16);
  auto receive = comm.irecv(incoming, 1, 7);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  try {
    receive.wait();
    ADD_FAILURE() << "a receive from a killed peer completed";
  } catch (const Error& error) {
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    fmt::print("survivor's error {:.2f} s after the kill: {}\n", seconds, error.what());
    EXPECT_EQ(error.code(), ErrorCode::peer_failure) << error.what();
    EXPECT_EQ(error.context().peer, 1);
    const std::string what = error.what();
    EXPECT_TRUE(what.find(fmt::format("peer 1 (pid {} on this host) has ended", child)) != std::string::npos ||
                what.find("UCX reports peer 1 failed") != std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace meshcomm::testing
