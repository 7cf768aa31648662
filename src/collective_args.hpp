#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <vector>

#include "backend/backend.hpp"
#include "meshcomm/buffer.hpp"
#include "meshcomm/collective_options.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

/// One collective call, validated and normalised, as algorithms and backends see it.
struct CollectiveArgs {
  CollectiveKind kind = CollectiveKind::all_gather;
  ConstBufferView input;
  BufferView output;
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  AllToAllvLayout layout;
  bool in_place = false;
  /// Orders the call on CUDA memory (see CollectiveOptions::stream).
  StreamRef stream;
  OperationLabel label;
  /// Where the caller made the call (compared between ranks under MESHCOMM_DEBUG=callsite).
  std::source_location site;
  /// The collective's number on its communicator (set as it starts; see CollectiveTags).
  std::uint64_t call = 0;
  /// The collective's entry in its communicator's flight record (set as it starts).
  std::uint64_t record_index = Work::kNotRecorded;
  /// Whether the call or MESHCOMM_ALGO named its algorithm, rather than the selection table
  /// (set as it starts): a named algorithm takes no measured choice of its own between ways.
  bool algorithm_named = false;
  /// The size the selection table is indexed by: the larger of the two buffers, in bytes.
  [[nodiscard]] std::size_t bytes() const noexcept { return std::max(input.bytes(), output.bytes()); }
};

/// Room for an all_to_allv's four lists: up to 16 ranks cost no malloc (recycled_allocation.hpp).
using LayoutStorage = std::vector<std::size_t, ShortListAllocator<std::size_t, 4 * 16>>;

/// `layout` copied into `storage` (replacing what it held), as spans into it: for work that
/// outlasts the call, whose caller's arrays need not.
AllToAllvLayout copy_layout(const AllToAllvLayout& layout, LayoutStorage& storage);

}  // namespace meshcomm::detail
