#include "setup_exchange.hpp"

#include <algorithm>

namespace meshcomm::detail {

std::vector<std::byte> exchange_all_gather(CommunicatorImpl& comm, std::span<const std::byte> mine,
                                           OperationLabel label) {
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t bytes = mine.size();
  std::vector<std::byte> all(bytes * size);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(bytes * rank));
  const int tag = comm.next_internal_tag();
  std::vector<Work> works;
  for (int step = 1; step < size; ++step) {
    const int to = (rank + step) % size;
    const int from = (rank - step + size) % size;
    works.push_back(comm.make_work(comm.backend().isend({mine.data(), bytes, DataType::u8}, to, tag, Lane::internal, label, {})));
    works.push_back(comm.make_work(
        comm.backend().irecv({all.data() + bytes * from, bytes, DataType::u8}, from, tag, Lane::internal, label, {})));
  }
  comm.make_work(std::make_shared<GroupWorkState>(std::move(works))).wait();
  return all;
}

}  // namespace meshcomm::detail
