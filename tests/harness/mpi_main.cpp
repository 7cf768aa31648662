// GoogleTest main for tests run under mpirun: every process runs every test on the shared world
// communicator. Rank 0 prints the usual report; other ranks print only their failures.
// MESHCOMM_TEST_BACKEND=ucx runs them on the ucx backend (MPI then only bootstraps).
// Host copies may stream from 256 KiB here unless MESHCOMM_STREAMING_COPY_BYTES says otherwise,
// so that tests of a few MiB cross that threshold on every machine, whatever its cache: from it
// each size class of the shm reductions takes both kinds of stores in its first four pieces, and
// then whichever measured faster.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <memory>

#include "meshcomm/mpi_bootstrap.hpp"
#include "mpi_world.hpp"
#include "thread_ranks.hpp"

namespace meshcomm::testing {
namespace {

std::unique_ptr<Communicator> world_communicator;

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
    }
  }

 private:
  int rank_;
};

}  // namespace

Communicator& mpi_world() { return *world_communicator; }

}  // namespace meshcomm::testing

int main(int argc, char** argv) {
  ::setenv("MESHCOMM_STREAMING_COPY_BYTES", "256K", 0);
  meshcomm::MpiSession session(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  meshcomm::MpiBootstrap bootstrap(MPI_COMM_WORLD, meshcomm::testing::kTestTimeout);
  const char* backend = std::getenv("MESHCOMM_TEST_BACKEND");
  const bool on_ucx = backend != nullptr && std::string_view(backend) == "ucx";
  meshcomm::testing::world_communicator = std::make_unique<meshcomm::Communicator>(meshcomm::Communicator::create(
      bootstrap, {.backend = on_ucx ? meshcomm::BackendKind::ucx : meshcomm::BackendKind::automatic,
                  .timeout = meshcomm::testing::kTestTimeout}));
  const int rank = meshcomm::testing::world_communicator->rank();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new meshcomm::testing::FailurePrinter(rank));
  }
  const int result = RUN_ALL_TESTS();
  meshcomm::testing::world_communicator.reset();
  return result;
}
