#pragma once

// A bootstrap for processes a test forks itself (no launcher): the ranks exchange their bytes
// through an anonymous shared mapping made before the fork. For tests in which a process must
// die without a launcher ending the others first.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include "meshcomm/bootstrap.hpp"

namespace meshcomm::testing {

/// The shared mapping of one forked world; create it before forking.
class ForkWorld {
 public:
  /// A world of `size` ranks whose all-gathers carry at most `slot_bytes` bytes per rank.
  static std::shared_ptr<ForkWorld> create(int size, std::size_t slot_bytes = 64 << 10);
  ~ForkWorld();
  ForkWorld(const ForkWorld&) = delete;
  ForkWorld& operator=(const ForkWorld&) = delete;

  [[nodiscard]] int size() const noexcept { return size_; }
  /// The all-gather round `round`'s slot of `rank` (rounds alternate between two sets of slots).
  [[nodiscard]] std::byte* slot(std::uint64_t round, int rank) const noexcept;
  [[nodiscard]] std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  /// Ranks that have finished writing, over all rounds.
  [[nodiscard]] std::atomic<std::uint64_t>& arrivals() const noexcept;

 private:
  ForkWorld(int size, std::size_t slot_bytes, std::byte* mapping, std::size_t mapping_bytes)
      : size_(size), slot_bytes_(slot_bytes), mapping_(mapping), mapping_bytes_(mapping_bytes) {}
  int size_;
  std::size_t slot_bytes_;
  std::byte* mapping_;
  std::size_t mapping_bytes_;
};

/// One forked process's rank of a ForkWorld. Each exchange gives up after `timeout`.
class ForkBootstrap final : public Bootstrap {
 public:
  ForkBootstrap(std::shared_ptr<ForkWorld> world, int rank,
                std::chrono::milliseconds timeout = std::chrono::milliseconds{20000})
      : world_(std::move(world)), rank_(rank), timeout_(timeout) {}

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return world_->size(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "fork"; }
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override { (void)all_gather({}); }

 private:
  std::shared_ptr<ForkWorld> world_;
  int rank_;
  std::chrono::milliseconds timeout_;
  std::uint64_t round_ = 0;
};

}  // namespace meshcomm::testing
