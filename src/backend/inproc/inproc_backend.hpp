#pragma once

#include <memory>

#include "../backend.hpp"
#include "inproc_group.hpp"

namespace meshcomm::detail {

/// Ranks as threads of one process: messages are single copies between the threads' buffers,
/// host or CUDA memory (several ranks on one GPU copy device to device).
class InprocBackend final : public Backend {
 public:
  InprocBackend(std::shared_ptr<InprocGroup> group, int rank, int size)
      : group_(std::move(group)), rank_(rank), size_(size) {}

  [[nodiscard]] BackendKind kind() const noexcept override { return BackendKind::inproc; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int max_tag() const noexcept override { return (1 << 30) - 1; }
  [[nodiscard]] bool moves(MemoryKind memory) const noexcept override;

  std::shared_ptr<WorkState> isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::shared_ptr<WorkState> irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::unique_ptr<Backend> split(std::span<const int> members, int color, std::uint64_t split_index) override;
  /// Sets the fatal state and fails this rank's unmatched sends and receives at once.
  void abort(const Error& cause) override;

 private:
  std::shared_ptr<WorkState> post(bool is_send, void* buffer, std::size_t bytes, MemoryKind memory, int peer, int tag,
                                  Lane lane, OperationLabel label);

  std::shared_ptr<InprocGroup> group_;
  int rank_;
  int size_;
};

}  // namespace meshcomm::detail
