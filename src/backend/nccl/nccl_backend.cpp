#include "nccl_backend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "collective_args.hpp"
#include "hot_path.hpp"
#include "meshcomm/bootstrap.hpp"
#include "nccl_channel.hpp"
#include "nccl_collectives.hpp"
#include "nccl_work.hpp"

namespace meshcomm::detail {

namespace {

class NcclBackend final : public Backend {
 public:
  NcclBackend(std::shared_ptr<NcclChannel> channel, std::unique_ptr<Backend> host)
      : channel_(std::move(channel)), host_(std::move(host)), rank_(host_->rank()), size_(host_->size()) {}

  /// The channel is made after the backend, so that it shares the backend's fatal state.
  void attach(std::shared_ptr<NcclChannel> channel) { channel_ = std::move(channel); }

  [[nodiscard]] BackendKind kind() const noexcept override { return BackendKind::nccl; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int max_tag() const noexcept override { return host_->max_tag(); }
  [[nodiscard]] bool thread_safe() const noexcept override { return host_->thread_safe(); }
  [[nodiscard]] bool moves(MemoryKind) const noexcept override { return true; }
  [[nodiscard]] bool stream_ordered() const noexcept override { return true; }

  std::shared_ptr<WorkState> isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override {
    if (data.memory == MemoryKind::host) return host_->isend(data, peer, tag, lane, label, stream);
    // NCCL only reads through the pointer of a send.
    return channel_->queue(true, const_cast<void*>(data.data), data.bytes(), peer, stream_for(lane, stream),
                           site(label, peer));
  }

  std::shared_ptr<WorkState> irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                   StreamRef stream) override {
    if (data.memory == MemoryKind::host) return host_->irecv(data, peer, tag, lane, label, stream);
    return channel_->queue(false, data.data, data.bytes(), peer, stream_for(lane, stream), site(label, peer));
  }

  std::unique_ptr<Backend> split(std::span<const int> members, int color, std::uint64_t split_index) override {
    auto host = host_->split(members, color, split_index);
    const auto me = std::find(members.begin(), members.end(), rank());
    auto backend = std::make_unique<NcclBackend>(nullptr, std::move(host));
    backend->attach(channel_->split(color, static_cast<int>(me - members.begin()), backend->fatal_state()));
    return backend;
  }

  /// Aborts the NCCL communicator (ncclCommAbort stops its kernels, so queued work ends: at
  /// once, or at the next poll of the thread inside a channel call) and the host backend's
  /// pending messages.
  void abort(const Error& cause) override {
    Backend::abort(cause);
    host_->abort(cause);
    channel_->abort_soon(cause);
  }

  [[nodiscard]] std::string native_unsupported_reason(const CollectiveArgs& args) const override {
    return nccl_collective_unsupported_reason(args);
  }
  MESHCOMM_HOT [[nodiscard]] bool runs_native(const CollectiveArgs& args) const override {
    return nccl_runs_collective(args);
  }

  MESHCOMM_HOT std::shared_ptr<WorkState> start_native(const CollectiveArgs& args) override {
    return start_nccl_collective(*channel_, args, size(), site(args.label, -1));
  }
  // NcclBackend is final, so the start_native() below binds directly.
  MESHCOMM_HOT std::shared_ptr<WorkState> try_start_native(const CollectiveArgs& args) override {
    return nccl_runs_collective(args) ? start_native(args) : nullptr;
  }

 private:
  /// Where an operation is issued; the kind written out keeps a virtual call off the per-call path.
  [[nodiscard]] NcclCallSite site(OperationLabel label, int peer) const {
    return {.label = label, .rank = rank_, .peer = peer, .backend = BackendKind::nccl};
  }

  /// meshcomm's own messages that name no stream use the channel's; a user's, the one given
  /// (none: the legacy default stream).
  [[nodiscard]] cudaStream_t stream_for(Lane lane, StreamRef stream) const noexcept {
    if (lane == Lane::internal && stream.native_handle() == nullptr) return channel_->internal_stream();
    return static_cast<cudaStream_t>(stream.native_handle());
  }

  std::shared_ptr<NcclChannel> channel_;
  std::unique_ptr<Backend> host_;
  int rank_;  // the host backend's, kept here: every NCCL call names it
  int size_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(Bootstrap& bootstrap, std::unique_ptr<Backend> host,
                                           std::chrono::milliseconds timeout) {
  auto backend = std::make_unique<NcclBackend>(nullptr, std::move(host));
  backend->attach(NcclChannel::create(bootstrap, timeout, backend->fatal_state()));
  return backend;
}

}  // namespace meshcomm::detail
