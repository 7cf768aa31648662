#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "meshcomm/bootstrap.hpp"
#include "ucx_operation.hpp"
#include "ucx_peers.hpp"
#include "ucx_segments.hpp"

namespace meshcomm::detail {

/// How a message's 64-bit UCX tag is laid out, since matching is worker-wide:
///
///     [kind: 2 bits][context: 13 bits][lane: 2 bits][source rank: 17 bits][tag: 30 bits]
///
/// The kind tells a message from a single-copy descriptor, its answer and its payload, the context
/// the process's communicators apart (agreed as each is made), the lane the user's messages from
/// meshcomm's own and from the backend's setup, the source the sender within the communicator (a
/// receive names its peer), and the tag is the caller's.
struct UcxTag {
  static constexpr int kTagBits = 30;
  static constexpr int kSourceBits = 17;
  static constexpr int kLaneBits = 2;
  static constexpr int kContextBits = 13;
  static constexpr int kKindBits = 2;
  static constexpr std::uint64_t kMessage = 0;
  static constexpr std::uint64_t kDescriptor = 1;
  static constexpr std::uint64_t kAcknowledgement = 2;
  static constexpr std::uint64_t kPayload = 3;
  static constexpr int kMaxTag = (1 << kTagBits) - 1;
  static constexpr int kMaxRanks = 1 << kSourceBits;
  static constexpr std::uint32_t kMaxContext = (1U << kContextBits) - 1;
  /// The backend's own messages (split agreements), apart from both communicator lanes.
  static constexpr std::uint64_t kSetupLane = 2;

  static constexpr int kKindShift = kContextBits + kLaneBits + kSourceBits + kTagBits;
  /// A receive's mask that takes a message or a descriptor alike (kMessage and kDescriptor differ
  /// in this bit alone): the sender of a mid-sized message chooses how it goes.
  static constexpr ucp_tag_t kMessageOrDescriptorMask = ~(ucp_tag_t{kMessage ^ kDescriptor} << kKindShift);

  static constexpr ucp_tag_t make(std::uint32_t context, std::uint64_t lane, int source, int tag,
                                  std::uint64_t kind = kMessage) noexcept {
    return (kind << kKindShift) |
           (static_cast<ucp_tag_t>(context) << (kLaneBits + kSourceBits + kTagBits)) |
           (lane << (kSourceBits + kTagBits)) | (static_cast<ucp_tag_t>(source) << kTagBits) |
           static_cast<ucp_tag_t>(tag);
  }
};

/// UCX tag matching on the process's worker (UcxWorker), one endpoint per peer (UcxPeers).
/// Needs one rank per process: the bootstrap is MPI's or another launcher's, not threads.
class UcxBackend final : public Backend {
 public:
  UcxBackend(std::shared_ptr<UcxPeers> peers, std::shared_ptr<UcxSegments> segments, std::vector<int> root_ranks,
             int rank, std::uint32_t context, std::chrono::milliseconds timeout);

  [[nodiscard]] BackendKind kind() const noexcept override { return BackendKind::ucx; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return static_cast<int>(root_ranks_.size()); }
  [[nodiscard]] int max_tag() const noexcept override { return UcxTag::kMaxTag; }

  std::shared_ptr<WorkState> isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::shared_ptr<WorkState> irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override;
  std::unique_ptr<Backend> split(std::span<const int> members, int color, std::uint64_t split_index) override;

  /// allocate_shared memory is UCX's own (UcxSegments), so that peers' puts into it are stores.
  [[nodiscard]] std::shared_ptr<SegmentProvider> segment_provider() const override { return segments_; }
  [[nodiscard]] bool puts() const noexcept override { return true; }
  [[nodiscard]] bool shares_memory_with(int peer) const noexcept override {
    return peers_->same_host(root_ranks_[static_cast<std::size_t>(peer)]);
  }
  std::shared_ptr<WorkState> put(ConstBufferView source, int peer, const std::string& handle, std::size_t offset,
                                 OperationLabel label) override;

 private:
  /// Whether a send of `bytes` to a single-copy peer, at least single_copy_receive_bytes, goes
  /// by descriptor: always from the single-copy threshold; from the exchange threshold, where this
  /// process has a receive of that size or more posted beside it (ucx_single_copy.hpp).
  [[nodiscard]] bool announces(std::size_t bytes) const;
  /// The tags of a single-copy message of `tag` on `lane` from rank `sender` to rank `receiver`.
  [[nodiscard]] SingleCopyTags single_copy_tags(Lane lane, int sender, int receiver, int tag) const noexcept;
  /// A tagged send or receive of `bytes` on `lane` (its bits in UcxTag); `finished_inside` as for
  /// start_tag_send.
  std::shared_ptr<WorkState> tag_send(const void* data, std::size_t bytes, int peer, int tag, std::uint64_t lane,
                                      OperationLabel label, FinishedInside finished_inside = FinishedInside::operation);
  std::shared_ptr<WorkState> tag_receive(void* data, std::size_t bytes, int peer, int tag, std::uint64_t lane,
                                         OperationLabel label,
                                         FinishedInside finished_inside = FinishedInside::operation);
  /// Every rank's context id proposal, over this communicator (the backend's setup lane).
  std::uint32_t agree_on_context(std::uint64_t split_index);

  std::shared_ptr<UcxPeers> peers_;
  std::shared_ptr<UcxSegments> segments_;  ///< shared by every communicator split from the root
  std::vector<int> root_ranks_;  ///< this communicator's ranks in the root's numbering
  int rank_;
  std::uint32_t context_;
  std::chrono::milliseconds timeout_;
};

/// The root ucx backend of `bootstrap`'s ranks (collective; at most `timeout` per exchange).
std::unique_ptr<Backend> make_ucx_backend(Bootstrap& bootstrap, std::chrono::milliseconds timeout);

}  // namespace meshcomm::detail
