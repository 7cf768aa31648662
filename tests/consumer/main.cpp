// Uses the installed meshcomm: two ranks as threads exchange a value, all-reduce it and fill a
// halo; a mesh is parsed and placed.

#include <cstdio>
#include <thread>
#include <vector>

#include <meshcomm/meshcomm.hpp>
#if MESHCOMM_HAVE_MPI
#include <meshcomm/mpi_bootstrap.hpp>  // must compile: MPI's headers come with the package
#endif

int main() {
  auto world = meshcomm::InProcessWorld::create(2);
  std::vector<int> received(2, -1);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      meshcomm::InProcessBootstrap bootstrap(world, rank);
      auto comm = meshcomm::Communicator::create(bootstrap);
      int mine = 100 + rank;
      auto receive = comm.irecv(meshcomm::BufferView(&received[rank], 1, meshcomm::DataType::i32), 1 - rank, 0);
      comm.isend(meshcomm::ConstBufferView(&mine, 1, meshcomm::DataType::i32), 1 - rank, 0).wait();
      receive.wait();
      std::vector<int> values{rank + 1};
      comm.all_reduce(values, values).wait();
      auto halo = meshcomm::HaloPlan::create(comm, {.shard_rows = {2, 2}, .left = 1, .row_elements = 1,
                                                    .type = meshcomm::DataType::i32});
      std::vector<int> extended{-1, 10 * rank, 10 * rank + 1};
      halo.start(extended.data()).wait();
      if (values[0] != 3 || (rank == 1 && extended[0] != 1)) received[rank] = -2;
    });
  }
  for (auto& rank : ranks) rank.join();
  const auto spec = meshcomm::MeshSpec::parse("1,-1,2,1").resolved(4);
  const auto placement = meshcomm::place_ranks(spec, {}, meshcomm::Topology::simulated(4, 2));
  const bool ok = received[0] == 101 && received[1] == 100 && spec.to_string() == "dp:1,fsdp:2,tp:2,sp:1" &&
                  placement[1][2] == 1;
  std::printf("consumer of meshcomm %s: %s\n", MESHCOMM_VERSION_STRING, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
