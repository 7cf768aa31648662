#pragma once

namespace meshcomm::detail {

/// `value` modulo `size`, in [0, size) also for negative values.
constexpr int wrap_rank(int value, int size) noexcept { return ((value % size) + size) % size; }

/// The rank a ring sends to.
constexpr int ring_right(int rank, int size) noexcept { return wrap_rank(rank + 1, size); }
/// The rank a ring receives from.
constexpr int ring_left(int rank, int size) noexcept { return wrap_rank(rank - 1, size); }

/// Ring all-gather, step s in [0, size-1): send block (rank - s), receive block (rank - s - 1).
constexpr int ring_all_gather_send_block(int rank, int size, int step) noexcept { return wrap_rank(rank - step, size); }
constexpr int ring_all_gather_recv_block(int rank, int size, int step) noexcept {
  return wrap_rank(rank - step - 1, size);
}

/// Ring reduce-scatter, step s in [0, size-1): send the partial of block (rank - s - 1), receive
/// the partial of block (rank - s - 2) and add this rank's own; after the last step block `rank`
/// is complete here.
constexpr int ring_reduce_scatter_send_block(int rank, int size, int step) noexcept {
  return wrap_rank(rank - step - 1, size);
}
constexpr int ring_reduce_scatter_recv_block(int rank, int size, int step) noexcept {
  return wrap_rank(rank - step - 2, size);
}

}  // namespace meshcomm::detail
