#include "mpi_arrivals.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/config.hpp"
#if MESHCOMM_HAVE_PMIX
#include "../../bootstrap/pmix_client.hpp"
#endif

namespace meshcomm::detail {

namespace {

/// How many creations this process has entered on each group of world ranks.
std::uint64_t next_creation_on(const std::vector<int>& world_ranks) {
  static std::mutex mutex;
  static std::map<std::vector<int>, std::uint64_t> creations;
  std::lock_guard lock(mutex);
  return creations[world_ranks]++;
}

}  // namespace

MpiArrivals::MpiArrivals(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank_);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) ranks[static_cast<std::size_t>(rank)] = rank;
  world_ranks_.resize(ranks.size());
  MPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks_.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  const auto group_hash = std::hash<std::string>{}(fmt::format("{}", fmt::join(world_ranks_, ",")));
  key_ = fmt::format("meshcomm.arrived.{:x}.{}", group_hash, next_creation_on(world_ranks_));
}

void MpiArrivals::announce() const {
#if MESHCOMM_HAVE_PMIX
  PmixSession session;
  if (session.ok()) (void)pmix_publish(key_, std::as_bytes(std::span("1", 1)));
#endif
}

std::optional<std::vector<int>> MpiArrivals::missing(std::chrono::milliseconds wait) const {
#if MESHCOMM_HAVE_PMIX
  PmixSession session;
  if (!session.ok()) return std::nullopt;
  std::vector<int> others;
  for (std::size_t index = 0; index < world_ranks_.size(); ++index) {
    if (static_cast<int>(index) != rank_ && world_ranks_[index] != MPI_UNDEFINED) others.push_back(world_ranks_[index]);
  }
  const auto answers = pmix_fetch(session, key_, others, wait);
  if (!answers) return std::nullopt;
  std::vector<int> absent;
  std::size_t answer = 0;
  for (std::size_t index = 0; index < world_ranks_.size(); ++index) {
    if (static_cast<int>(index) == rank_ || world_ranks_[index] == MPI_UNDEFINED) continue;
    if (!(*answers)[answer++]) absent.push_back(static_cast<int>(index));
  }
  return absent;
#else
  (void)wait;
  return std::nullopt;
#endif
}

}  // namespace meshcomm::detail
