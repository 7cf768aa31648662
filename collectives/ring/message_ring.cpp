// A ring whose blocks travel as the backend's messages (host memory, or CUDA memory that the
// backend moves), driven by a progress thread so that transfers advance while the caller computes.

#include <fmt/format.h>

#include "communicator_impl.hpp"
#include "device/device_runtime.hpp"
#include "internal_p2p.hpp"
#include "progress_thread.hpp"
#include "ring_transport.hpp"

namespace meshcomm::detail {

namespace {

class MessageRing final : public RingTransport {
 public:
  MessageRing(CommunicatorImpl& comm, const RingPipelineSpec& spec, RingPeers peers)
      : comm_(comm), bytes_(spec.block_bytes), memory_(spec.memory), peers_(peers) {
    for (auto& buffer : buffers_) {
      const std::size_t size = std::max<std::size_t>(bytes_, 1);
      buffer = memory_ == MemoryKind::cuda
                   ? std::shared_ptr<std::byte>(static_cast<std::byte*>(device::allocate(size)), device::release)
                   : std::shared_ptr<std::byte>(new std::byte[size], std::default_delete<std::byte[]>());
    }
    if (spec.progress_thread && comm_.backend().thread_safe()) progress_ = std::make_unique<ProgressThread>();
  }

  ~MessageRing() override { progress_.reset(); }  // joined before the buffers go

  std::span<std::byte> current() noexcept override { return {buffers_[current_].get(), bytes_}; }

  Work start(OperationLabel label, StreamRef stream) override {
    comm_.order_after_stream(memory_, stream);
    const int tag = comm_.reserve_internal_tags(1);
    WorkList parts;
    parts.push_back(recv_bytes(comm_, buffers_[1 - current_].get(), bytes_, peers_.receive, tag, label, memory_));
    parts.push_back(send_bytes(comm_, buffers_[current_].get(), bytes_, peers_.send, tag, label, memory_));
    std::shared_ptr<WorkState> transfer = std::make_shared<GroupWorkState>(std::move(parts));
    if (progress_ != nullptr) {
      transfer = progress_->drive(std::move(transfer), comm_.timeout(),
                                  fmt::format("ring step: receiving the next block from peer {} and sending this one "
                                              "to peer {}",
                                              peers_.receive, peers_.send),
                                  comm_.context(label, peers_.receive));
    }
    transfer_ = transfer;
    return comm_.make_work(std::move(transfer));
  }

  void advance(StreamRef) override {
    // Messages are complete when their work is: make sure before the buffers swap roles.
    if (transfer_ != nullptr) transfer_->wait_until(deadline_after(comm_.timeout()));
    transfer_ = nullptr;
    current_ = 1 - current_;
  }

 private:
  CommunicatorImpl& comm_;
  std::size_t bytes_;
  MemoryKind memory_;
  RingPeers peers_;
  std::shared_ptr<std::byte> buffers_[2];
  int current_ = 0;
  std::shared_ptr<WorkState> transfer_;
  std::unique_ptr<ProgressThread> progress_;
};

}  // namespace

std::unique_ptr<RingTransport> make_message_ring(CommunicatorImpl& comm, const RingPipelineSpec& spec,
                                                 RingPeers peers) {
  return std::make_unique<MessageRing>(comm, spec, peers);
}

}  // namespace meshcomm::detail
