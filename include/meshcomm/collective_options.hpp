#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "meshcomm/export.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm {

/// The collective operations of a `Communicator`.
enum class CollectiveKind : std::uint8_t { all_gather, reduce_scatter, all_reduce, all_to_all, all_to_allv, broadcast };

/// "all_gather", "reduce_scatter", ...
MESHCOMM_API std::string_view to_string(CollectiveKind kind) noexcept;

/// Options of collectives that do not reduce. Designated initializers: `{.algorithm = "ring"}`.
struct CollectiveOptions {
  /// An algorithm by name ("ring", "native", ...); empty lets the selection table (and the
  /// MESHCOMM_ALGO environment variable) choose. An unknown name is an error listing the valid ones.
  std::string_view algorithm{};
  /// The stream that orders the operation on CUDA memory; ignored for host memory.
  StreamRef stream{};
};

/// Options of reducing collectives.
struct ReduceOptions {
  ReduceOp op = ReduceOp::sum;
  std::string_view algorithm{};
  StreamRef stream{};
};

/// Options of broadcast.
struct BroadcastOptions {
  int root = 0;
  std::string_view algorithm{};
  StreamRef stream{};
};

/// Per-peer counts and offsets of `all_to_allv`, in elements; each span has one entry per rank.
/// Rank r sends `send_counts[p]` elements from `input + send_offsets[p]` to peer p, and receives
/// `recv_counts[p]` elements from peer p at `output + recv_offsets[p]`. Both sides of each pair
/// must agree on the count, or both fail with `ErrorCode::size_mismatch`.
struct AllToAllvLayout {
  std::span<const std::size_t> send_counts;
  std::span<const std::size_t> send_offsets;
  std::span<const std::size_t> recv_counts;
  std::span<const std::size_t> recv_offsets;
};

}  // namespace meshcomm
