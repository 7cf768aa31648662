#include "fork_bootstrap.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::testing {

namespace {

/// The mapping starts with the arrival counter; each set of slots holds a length and the bytes.
constexpr std::size_t kHeader = 64;

}  // namespace

std::shared_ptr<ForkWorld> ForkWorld::create(int size, std::size_t slot_bytes) {
  const std::size_t bytes = kHeader + 2 * static_cast<std::size_t>(size) * (sizeof(std::uint64_t) + slot_bytes);
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) throw Error(ErrorCode::backend_failure, "mmap for the forked world failed");
  new (mapping) std::atomic<std::uint64_t>(0);
  return std::shared_ptr<ForkWorld>(new ForkWorld(size, slot_bytes, static_cast<std::byte*>(mapping), bytes));
}

ForkWorld::~ForkWorld() { munmap(mapping_, mapping_bytes_); }

std::byte* ForkWorld::slot(std::uint64_t round, int rank) const noexcept {
  const std::size_t index = (round % 2) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(rank);
  return mapping_ + kHeader + index * (sizeof(std::uint64_t) + slot_bytes_);
}

std::atomic<std::uint64_t>& ForkWorld::arrivals() const noexcept {
  return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(mapping_));
}

std::vector<std::byte> ForkBootstrap::all_gather(std::span<const std::byte> mine) {
  if (mine.size() > world_->slot_bytes()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} bytes do not fit a forked world's slot of {}",
                                                         mine.size(), world_->slot_bytes()));
  }
  // Round r writes the set of slots r % 2: a rank can be at most one round ahead of the
  // slowest, whose reads of round r end before it arrives at round r + 1.
  std::byte* own = world_->slot(round_, rank_);
  const std::uint64_t length = mine.size();
  std::memcpy(own, &length, sizeof length);
  std::memcpy(own + sizeof length, mine.data(), mine.size());
  world_->arrivals().fetch_add(1, std::memory_order_acq_rel);
  const auto everyone = static_cast<std::uint64_t>(size()) * (round_ + 1);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (world_->arrivals().load(std::memory_order_acquire) < everyone) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error(ErrorCode::timeout, fmt::format("forked world: round {} did not complete within {} ms", round_,
                                                  timeout_.count()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  std::vector<std::byte> all;
  for (int rank = 0; rank < size(); ++rank) {
    const std::byte* theirs = world_->slot(round_, rank);
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, theirs, sizeof bytes);
    if (bytes != length) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("forked world: rank {} gathered {} bytes, rank {} {}", rank, bytes, rank_, length));
    }
    all.insert(all.end(), theirs + sizeof bytes, theirs + sizeof bytes + bytes);
  }
  ++round_;
  return all;
}

}  // namespace meshcomm::testing
