#include "halo_layout.hpp"

#include <algorithm>
#include <numeric>

namespace meshcomm::detail {

namespace {

/// A run of halo rows that one owner holds contiguously.
struct Run {
  int owner;
  std::size_t owner_row;  // local row in the owner's shard
  std::size_t count;
  std::size_t halo_row;   // extended row in the receiver
};

/// The runs that fill `rank`'s halos, in slot order (left halo first, then right).
std::vector<Run> halo_runs(const std::vector<std::size_t>& shard_rows, const std::vector<std::size_t>& starts,
                           std::size_t total, int rank, std::size_t left, std::size_t right, bool periodic) {
  std::vector<Run> runs;
  const auto owner_of = [&](std::size_t global) {
    // The last rank whose start is <= global and whose shard is not empty.
    auto it = std::upper_bound(starts.begin(), starts.end(), global);
    int owner = static_cast<int>(it - starts.begin()) - 1;
    while (shard_rows[owner] == 0) --owner;
    return owner;
  };
  const auto add_range = [&](std::int64_t first_global, std::size_t count, std::size_t first_halo_row) {
    for (std::size_t i = 0; i < count;) {
      std::int64_t global = first_global + static_cast<std::int64_t>(i);
      if (!periodic && (global < 0 || global >= static_cast<std::int64_t>(total))) {
        ++i;  // beyond the sequence: nothing to fill
        continue;
      }
      const auto wrapped = static_cast<std::size_t>(((global % static_cast<std::int64_t>(total)) +
                                                     static_cast<std::int64_t>(total)) %
                                                    static_cast<std::int64_t>(total));
      const int owner = owner_of(wrapped);
      const std::size_t owner_row = wrapped - starts[owner];
      const std::size_t available = std::min(shard_rows[owner] - owner_row, count - i);
      runs.push_back({owner, owner_row, available, first_halo_row + i});
      i += available;
    }
  };
  const std::size_t own = shard_rows[rank];
  add_range(static_cast<std::int64_t>(starts[rank]) - static_cast<std::int64_t>(left), left, 0);
  add_range(static_cast<std::int64_t>(starts[rank] + own), right, left + own);
  return runs;
}

}  // namespace

HaloExchangeLayout halo_layout_1d(const std::vector<std::size_t>& shard_rows, int rank, std::size_t left,
                                  std::size_t right, bool periodic) {
  const int size = static_cast<int>(shard_rows.size());
  std::vector<std::size_t> starts(shard_rows.size());
  std::exclusive_scan(shard_rows.begin(), shard_rows.end(), starts.begin(), std::size_t{0});
  const std::size_t total = std::accumulate(shard_rows.begin(), shard_rows.end(), std::size_t{0});
  HaloExchangeLayout layout;
  if (total == 0) return layout;
  auto range = [](std::size_t first, std::size_t count) {
    std::vector<std::size_t> rows(count);
    std::iota(rows.begin(), rows.end(), first);
    return rows;
  };
  // What this rank receives: its own runs, one message per run from another rank.
  const auto mine = halo_runs(shard_rows, starts, total, rank, left, right, periodic);
  for (std::size_t slot = 0; slot < mine.size(); ++slot) {
    const auto& run = mine[slot];
    if (run.owner == rank) {
      for (std::size_t k = 0; k < run.count; ++k) layout.local.push_back({left + run.owner_row + k, run.halo_row + k});
    } else {
      layout.receives.push_back({run.owner, static_cast<int>(slot), range(run.halo_row, run.count)});
    }
  }
  // What this rank sends: the runs of every other rank that this rank owns.
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const auto theirs = halo_runs(shard_rows, starts, total, peer, left, right, periodic);
    for (std::size_t slot = 0; slot < theirs.size(); ++slot) {
      const auto& run = theirs[slot];
      if (run.owner == rank) {
        layout.sends.push_back({peer, static_cast<int>(slot), range(left + run.owner_row, run.count)});
      }
    }
  }
  return layout;
}

}  // namespace meshcomm::detail
