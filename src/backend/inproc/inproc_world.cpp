#include "inproc_world.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../../environment.hpp"
#include "../../host_cores.hpp"
#include "../../work_state.hpp"
#include "inproc_group.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm {

InProcessWorld::Impl::Impl(int size, std::chrono::milliseconds timeout)
    : size_(size),
      timeout_(timeout),
      contributions_(static_cast<std::size_t>(size)),
      arrived_(static_cast<std::size_t>(size), false),
      creations_(std::make_shared<detail::InprocGroup>(size)),
      created_by_rank_(static_cast<std::size_t>(size), 0) {}

std::shared_ptr<detail::InprocGroup> InProcessWorld::Impl::next_root_group(int rank) {
  std::uint64_t index = 0;
  {
    std::lock_guard lock(mutex_);
    index = created_by_rank_[rank]++;
  }
  return creations_->child(index, 0, size_);
}

std::vector<std::byte> InProcessWorld::Impl::all_gather(int rank, std::span<const std::byte> mine) {
  std::unique_lock lock(mutex_);
  const auto generation = generation_;
  contributions_[rank].assign(mine.begin(), mine.end());
  arrived_[rank] = true;
  if (++arrived_count_ == size_) {
    std::vector<std::byte> result;
    for (int other = 0; other < size_; ++other) {
      if (contributions_[other].size() != mine.size()) {
        // Release the round so no rank waits on it, then report on the rank that noticed.
        arrived_.assign(arrived_.size(), false);
        arrived_count_ = 0;
        ++generation_;
        last_result_.clear();
        changed_.notify_all();
        throw Error(ErrorCode::size_mismatch,
                    fmt::format("bootstrap all_gather: rank {} gave {} bytes but rank {} gave {}; every rank must "
                                "give the same number",
                                rank, mine.size(), other, contributions_[other].size()),
                    {.backend = "inproc", .operation = "bootstrap all_gather", .rank = rank, .peer = other});
      }
      result.insert(result.end(), contributions_[other].begin(), contributions_[other].end());
    }
    last_result_ = std::move(result);
    arrived_.assign(arrived_.size(), false);
    arrived_count_ = 0;
    ++generation_;
    changed_.notify_all();
    return last_result_;
  }
  const auto deadline = detail::deadline_after(timeout_);
  if (!changed_.wait_until(lock, deadline, [&] { return generation_ != generation; })) {
    std::vector<int> missing;
    for (int other = 0; other < size_; ++other) {
      if (!arrived_[other]) missing.push_back(other);
    }
    // Withdraw, so a late round is not corrupted by this rank's stale contribution.
    arrived_[rank] = false;
    --arrived_count_;
    throw Error(ErrorCode::timeout,
                fmt::format("bootstrap all_gather: ranks {} did not arrive within {} ms", missing, timeout_.count()),
                {.backend = "inproc", .operation = "bootstrap all_gather", .rank = rank,
                 .peer = missing.empty() ? -1 : missing.front()});
  }
  if (last_result_.size() != mine.size() * static_cast<std::size_t>(size_)) {
    throw Error(ErrorCode::size_mismatch, "bootstrap all_gather: ranks gave different numbers of bytes",
                {.backend = "inproc", .operation = "bootstrap all_gather", .rank = rank});
  }
  return last_result_;
}

std::shared_ptr<InProcessWorld> InProcessWorld::create(int size, std::chrono::milliseconds timeout) {
  if (size < 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("InProcessWorld::create: size = {} must be at least 1", size),
                {.backend = "inproc", .operation = "InProcessWorld::create"});
  }
  // Ranks as threads that outnumber the process's cores: a waiting rank naps soon, as ranks as
  // processes do where they outnumber their host's cores.
  if (size > detail::CoreSet::of_this_process().count()) detail::nap_when_idle();
  return std::shared_ptr<InProcessWorld>(
      new InProcessWorld(std::make_unique<Impl>(size, detail::resolve_timeout(timeout))));
}

InProcessWorld::InProcessWorld(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InProcessWorld::~InProcessWorld() = default;
int InProcessWorld::size() const noexcept { return impl_->size(); }


InProcessBootstrap::InProcessBootstrap(std::shared_ptr<InProcessWorld> world, int rank)
    : world_(std::move(world)), rank_(rank) {
  if (world_ == nullptr) {
    throw Error(ErrorCode::invalid_argument, "InProcessBootstrap: world is null; make one with InProcessWorld::create",
                {.backend = "inproc", .operation = "InProcessBootstrap"});
  }
  if (rank < 0 || rank >= world_->size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("InProcessBootstrap: rank = {} is outside the world; valid ranks are 0..{}", rank,
                            world_->size() - 1),
                {.backend = "inproc", .operation = "InProcessBootstrap"});
  }
}

InProcessBootstrap::~InProcessBootstrap() = default;

int InProcessBootstrap::size() const noexcept { return world_->size(); }

std::vector<std::byte> InProcessBootstrap::all_gather(std::span<const std::byte> mine) {
  return world_->impl().all_gather(rank_, mine);
}

void InProcessBootstrap::barrier() { (void)all_gather({}); }

}  // namespace meshcomm
