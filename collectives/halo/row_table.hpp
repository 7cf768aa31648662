#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "device/device_runtime.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// A fixed list of row moves (pack, unpack, local copies of a halo plan), made once and applied
/// at every exchange, on host memory by loops or on CUDA memory by one kernel launch per wave.
/// For additions, pairs that hit the same destination row go into successive waves, in list
/// order, so that every row gets its terms in the same order as on the host.
class RowTable {
 public:
  RowTable() = default;
  RowTable(std::vector<device::RowPair> pairs, MemoryKind memory);

  /// Copies `row_bytes` per pair from `source` rows to `destination` rows (strides in bytes).
  /// On CUDA memory the kernel runs on `stream`, complete on return unless `completion` is queued.
  void copy(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
            std::size_t row_bytes, StreamRef stream = {},
            device::Completion completion = device::Completion::on_return) const;
  /// Adds `row_elements` elements of `type` per pair from `source` rows onto `destination` rows.
  void add(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
           std::size_t row_elements, DataType type, StreamRef stream = {},
           device::Completion completion = device::Completion::on_return) const;

  [[nodiscard]] bool empty() const noexcept { return pairs_.empty(); }

 private:
  std::vector<device::RowPair> pairs_;  // ordered by wave
  std::vector<std::size_t> wave_starts_;  // first pair of each wave, and the end
  MemoryKind memory_ = MemoryKind::host;
  std::shared_ptr<device::RowPair> device_pairs_;  // the same pairs on the device
};

}  // namespace meshcomm::detail
