#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshcomm::detail {

/// One message of a halo exchange: rows of the extended buffer moved between this rank and
/// `peer`. `slot` tells apart several messages between the same two ranks (the receiver's
/// index of the message); both sides compute the same slot.
struct HaloMessage {
  int peer = 0;
  int slot = 0;
  std::vector<std::size_t> rows;  // extended-buffer row indices on this rank
};

/// A row this rank copies from itself (periodic halos on small rings).
struct LocalRowCopy {
  std::size_t from = 0;
  std::size_t to = 0;
};

/// Everything one rank sends, receives and copies in one exchange.
struct HaloExchangeLayout {
  std::vector<HaloMessage> sends;     // ordered by (peer, slot)
  std::vector<HaloMessage> receives;  // ordered by slot
  std::vector<LocalRowCopy> local;
};

/// The layout of `rank` for a 1-D sharded sequence: pure arithmetic, the same on every rank.
/// `shard_rows` lists every rank's rows; widths are already validated (0 <= width <= total).
HaloExchangeLayout halo_layout_1d(const std::vector<std::size_t>& shard_rows, int rank, std::size_t left,
                                  std::size_t right, bool periodic);

}  // namespace meshcomm::detail
