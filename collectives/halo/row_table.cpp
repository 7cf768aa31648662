#include "row_table.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "plain_copy.hpp"
#include "reduction.hpp"

namespace meshcomm::detail {

RowTable::RowTable(std::vector<device::RowPair> pairs, MemoryKind memory) : memory_(memory) {
  // Wave of a pair: how many earlier pairs write the same destination row.
  std::map<std::uint64_t, std::size_t> seen;
  std::vector<std::size_t> wave_of;
  std::size_t waves = pairs.empty() ? 0 : 1;
  for (const auto& pair : pairs) {
    wave_of.push_back(seen[pair.to]++);
    waves = std::max(waves, wave_of.back() + 1);
  }
  for (std::size_t wave = 0; wave < waves; ++wave) {
    wave_starts_.push_back(pairs_.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (wave_of[i] == wave) pairs_.push_back(pairs[i]);
    }
  }
  wave_starts_.push_back(pairs_.size());
  if (memory_ == MemoryKind::cuda && !pairs_.empty()) {
    const std::size_t bytes = pairs_.size() * sizeof(device::RowPair);
    device_pairs_.reset(static_cast<device::RowPair*>(device::allocate(bytes)), device::release);
    device::copy(device_pairs_.get(), pairs_.data(), bytes);
  }
}

void RowTable::copy(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
                    std::size_t row_bytes, StreamRef stream, device::Completion completion) const {
  if (pairs_.empty()) return;
  if (memory_ == MemoryKind::cuda) {
    // Copies never repeat a destination: one wave.
    device::copy_rows(destination, destination_stride, source, source_stride, device_pairs_.get(), pairs_.size(),
                      row_bytes, stream, completion);
    return;
  }
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  for (const auto& pair : pairs_) {
    plain_copy(to + pair.to * destination_stride, from + pair.from * source_stride, row_bytes);
  }
}

void RowTable::add(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
                   std::size_t row_elements, DataType type, StreamRef stream, device::Completion completion) const {
  if (pairs_.empty()) return;
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  for (std::size_t wave = 0; wave + 1 < wave_starts_.size(); ++wave) {
    const std::size_t first = wave_starts_[wave];
    const std::size_t count = wave_starts_[wave + 1] - first;
    if (memory_ == MemoryKind::cuda) {
      device::add_rows(destination, destination_stride, source, source_stride, device_pairs_.get() + first, count,
                       row_elements, type, stream, completion);
      continue;
    }
    for (std::size_t i = first; i < first + count; ++i) {
      reduce_into(to + pairs_[i].to * destination_stride, from + pairs_[i].from * source_stride, row_elements, type,
                  ReduceOp::sum);
    }
  }
}

}  // namespace meshcomm::detail
