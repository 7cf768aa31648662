#include "pending_reads.hpp"

#include <algorithm>

namespace meshcomm::detail {

void PendingReads::add(std::shared_ptr<PendingRead> read) {
  std::lock_guard lock(mutex_);
  reads_.push_back(std::move(read));
  pending_.store(reads_.size(), std::memory_order_release);
}

void PendingReads::remove(const PendingRead* read) noexcept {
  std::lock_guard lock(mutex_);
  const auto found = std::find_if(reads_.begin(), reads_.end(), [&](const auto& held) { return held.get() == read; });
  if (found == reads_.end()) return;
  reads_.erase(found);
  pending_.store(reads_.size(), std::memory_order_release);
}

void PendingReads::perform_all() noexcept {
  if (empty()) return;
  std::vector<std::shared_ptr<PendingRead>> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(reads_);
    pending_.store(0, std::memory_order_release);
  }
  // Outside the lock: a read answers its sender and may take the lock of its receive, whose
  // own test may be removing it from this list at the same time.
  for (const auto& read : taken) read->perform();
}

}  // namespace meshcomm::detail
