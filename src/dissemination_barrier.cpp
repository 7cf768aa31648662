#include "dissemination_barrier.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

int dissemination_rounds(int size) noexcept {
  int rounds = 0;
  while ((1 << rounds) < size) ++rounds;
  return rounds;
}

int dissemination_send_peer(int rank, int size, int round) noexcept { return (rank + (1 << round)) % size; }

int dissemination_recv_peer(int rank, int size, int round) noexcept {
  return ((rank - (1 << round)) % size + size) % size;
}

std::shared_ptr<WorkState> start_dissemination_barrier(CommunicatorImpl& comm, OperationLabel label,
                                                       int reserved_tag) {
  const int tag = reserved_tag >= 0 ? reserved_tag : comm.next_internal_tag();
  const int rank = comm.rank();
  const int size = comm.size();
  Backend* backend = &comm.backend();
  const auto timeout = comm.timeout();
  return make_schedule(
      dissemination_rounds(size), [=](int round) {
        WorkList works;
        works.emplace_back(backend->irecv({}, dissemination_recv_peer(rank, size, round), tag, Lane::internal, label, {}),
                           timeout);
        works.emplace_back(backend->isend({}, dissemination_send_peer(rank, size, round), tag, Lane::internal, label, {}),
                           timeout);
        return works;
      });
}

}  // namespace meshcomm::detail
