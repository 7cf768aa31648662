#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "meshcomm/bootstrap.hpp"

namespace meshcomm::detail {
class InprocGroup;
}

namespace meshcomm {

/// Shared state of an in-process world: the bootstrap's rendezvous and the root message group.
class InProcessWorld::Impl {
 public:
  Impl(int size, std::chrono::milliseconds timeout);

  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

  /// Every rank's `mine` in rank order, once all ranks have called; reusable round after round.
  std::vector<std::byte> all_gather(int rank, std::span<const std::byte> mine);

  /// The message group of the next communicator `rank` creates from this world: the n-th
  /// creation on every rank shares one group, distinct from every other creation's.
  std::shared_ptr<detail::InprocGroup> next_root_group(int rank);

 private:
  int size_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::byte>> contributions_;
  std::vector<bool> arrived_;
  int arrived_count_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::byte> last_result_;
  std::shared_ptr<detail::InprocGroup> creations_;
  std::vector<std::uint64_t> created_by_rank_;
};

}  // namespace meshcomm
