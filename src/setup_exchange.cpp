#include "setup_exchange.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshcomm::detail {

std::vector<std::byte> exchange_all_gather(CommunicatorImpl& comm, std::span<const std::byte> mine,
                                           OperationLabel label) {
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t bytes = mine.size();
  std::vector<std::byte> all(bytes * size);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(bytes * rank));
  const int tag = comm.next_internal_tag();
  WorkList sends;
  std::vector<std::pair<int, Work>> receives;  // (from, its receive)
  for (int step = 1; step < size; ++step) {
    const int to = (rank + step) % size;
    const int from = (rank - step + size) % size;
    sends.push_back(comm.make_work(comm.backend().isend({mine.data(), bytes, DataType::u8}, to, tag, Lane::internal, label, {})));
    receives.emplace_back(from, comm.make_work(comm.backend().irecv({all.data() + bytes * from, bytes, DataType::u8},
                                                                    from, tag, Lane::internal, label, {})));
  }
  const auto deadline = deadline_after(comm.timeout());
  const bool all_arrived = poll_until(
      [&] {
        bool done = true;
        for (auto& [from, receive] : receives) done = receive.test() && done;
        return done;
      },
      deadline);
  if (!all_arrived) {
    // Name every rank not heard from, not just the first: they are the ones that never arrived.
    std::vector<int> missing;
    for (auto& [from, receive] : receives) {
      if (receive.test()) continue;
      missing.push_back(from);
      try {
        receive.state()->wait_until(Clock::now());  // withdraws the receive
      } catch (const Error&) {
      }
    }
    std::sort(missing.begin(), missing.end());
    throw Error(ErrorCode::timeout,
                fmt::format("{} {} {} not joined this {} within {} ms: every rank of the communicator must call it",
                            missing.size() == 1 ? "rank" : "ranks", fmt::join(missing, ", "),
                            missing.size() == 1 ? "has" : "have", label.name, comm.timeout().count()),
                comm.context(label, missing.front()));
  }
  comm.make_work(std::make_shared<GroupWorkState>(std::move(sends))).wait();
  return all;
}

}  // namespace meshcomm::detail
