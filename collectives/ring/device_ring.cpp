// A ring of inproc ranks sharing one GPU, driven by streams and events: each step, a rank pulls
// the block its receive peer holds into its own spare buffer on a communication stream, while
// its compute stream works on the current block. Small host messages carry the events that
// order the buffers between ranks:
//
//   ready(r, k)   r's compute stream has finished with its spare buffer and its current block is
//                 final: the pull of step k into r and the pull of step k from r may start;
//   pulled(r, k)  r's pull of step k is done: its receive peer may overwrite the block it gave.
//
// Step k on rank r: record ready(r, k); send it to the send peer; take ready(recv, k) from the
// receive peer and pulled(send, k-1) from the send peer; queue the copy behind all three on the
// communication stream; record pulled(r, k) and send it to the receive peer. Every receive is
// posted before any wait that depends on a neighbour, so no cycle of waits can form around the
// ring. `advance` makes the compute stream wait for pulled(r, k): no host synchronisation with
// the GPU anywhere.

#include <cuda_runtime_api.h>

#include <cstring>
#include <deque>
#include <optional>

#include <fmt/format.h>

#include "device/cuda_check.hpp"
#include "device/device_runtime.hpp"
#include "internal_p2p.hpp"
#include "ring_transport.hpp"
#include "setup_exchange.hpp"

namespace meshcomm::detail {

namespace {

/// Completes when a CUDA event has; waiting past the deadline is a timeout naming the step.
class EventWork final : public WorkState {
 public:
  EventWork(cudaEvent_t event, ErrorContext context) : event_(event), context_(std::move(context)) {}
  bool test() override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    device::check_cuda(status, "cudaEventQuery");
    return true;
  }
  void wait_until(Clock::time_point deadline) override {
    if (!poll_until([this] { return test(); }, deadline)) {
      throw Error(ErrorCode::timeout, "the ring step's device copy did not finish in time", context_);
    }
  }

 private:
  cudaEvent_t event_;
  ErrorContext context_;
};

/// CTAs of the sm_copy kernel: enough for a few hundred GB/s, few enough to leave the compute
/// most of the SMs.
constexpr int kCopyBlocks = 8;

/// Pieces of a copy-engine transfer: device to host and host to device run at once on two
/// engines, a piece apart.
constexpr std::size_t kStagingPiece = std::size_t{4} << 20;

/// One step's events, kept until the neighbours can no longer be waiting to queue on them.
struct StepEvents {
  cudaEvent_t ready = nullptr;
  cudaEvent_t pulled = nullptr;
};

class DeviceRing final : public RingTransport {
 public:
  DeviceRing(CommunicatorImpl& comm, const RingPipelineSpec& spec, RingPeers peers, RingTransfer transfer)
      : comm_(comm), bytes_(spec.block_bytes), transfer_(transfer), peers_(peers) {
    const std::size_t size = std::max<std::size_t>(bytes_, 1);
    for (auto& buffer : buffers_) buffer = static_cast<std::byte*>(device::allocate(size));
    int least = 0;
    int greatest = 0;
    device::check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    // The highest priority, so that a copy kernel gets SMs as soon as the compute frees any.
    device::check_cuda(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest),
                       "cudaStreamCreateWithPriority");
    if (transfer_ == RingTransfer::copy_engine) {
      device::check_cuda(cudaStreamCreateWithPriority(&upload_stream_, cudaStreamNonBlocking, greatest),
                         "cudaStreamCreateWithPriority");
      piece_done_ = new_event();
      device::check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&staging_), size, cudaHostAllocDefault),
                         "cudaHostAlloc");
    }
    // Everyone learns where every rank's two buffers are (ranks share one address space).
    const std::byte* mine[2] = {buffers_[0], buffers_[1]};
    const auto label = comm_.begin("RingPipeline::create");
    const auto all = exchange_all_gather(comm_, std::as_bytes(std::span(mine)), label);
    std::memcpy(receive_peer_buffers_, all.data() + peers_.receive * sizeof mine, sizeof mine);
    finished_tag_ = comm_.reserve_internal_tags(1);
  }

  /// Collective: the send peer may still be pulling from our buffers. Each rank finishes its own
  /// pulls, tells its receive peer so, and frees its buffers once its send peer has said the
  /// same (each wait bounded by the timeout; errors cannot leave a destructor).
  ~DeviceRing() override {
    (void)cudaStreamSynchronize(stream_);
    const OperationLabel label{.name = "RingPipeline destroy"};
    try {
      if (pending_pulled_.has_value()) pending_pulled_->wait(comm_.timeout());
      if (pending_pulled_send_.has_value()) pending_pulled_send_->wait(comm_.timeout());
      const std::byte done{1};
      std::byte peer_done{0};
      auto told = send_bytes(comm_, &done, 1, peers_.receive, finished_tag_, label, MemoryKind::host);
      recv_bytes(comm_, &peer_done, 1, peers_.send, finished_tag_, label, MemoryKind::host).wait(comm_.timeout());
      told.wait(comm_.timeout());
    } catch (const Error&) {
    }
    for (auto& step : steps_) destroy(step);
    for (auto* buffer : buffers_) device::release(buffer);
    if (staging_ != nullptr) (void)cudaFreeHost(staging_);
    if (upload_stream_ != nullptr) {
      (void)cudaStreamSynchronize(upload_stream_);
      (void)cudaStreamDestroy(upload_stream_);
      (void)cudaEventDestroy(piece_done_);
    }
    (void)cudaStreamDestroy(stream_);
  }

  std::span<std::byte> current() noexcept override { return {buffers_[current_], bytes_}; }

  Work start(OperationLabel label, StreamRef stream) override {
    const auto compute = static_cast<cudaStream_t>(stream.native_handle());
    StepEvents step{new_event(), new_event()};
    device::check_cuda(cudaEventRecord(step.ready, compute), "cudaEventRecord");
    const int tag = comm_.reserve_internal_tags(2);
    cudaEvent_t receive_peer_ready = nullptr;
    outgoing_ready_ = step.ready;
    auto send_ready = send_bytes(comm_, &outgoing_ready_, sizeof(cudaEvent_t), peers_.send, tag, label,
                                 MemoryKind::host);
    recv_bytes(comm_, &receive_peer_ready, sizeof(cudaEvent_t), peers_.receive, tag, label, MemoryKind::host)
        .wait();
    send_ready.wait();
    if (pending_pulled_.has_value()) {
      pending_pulled_->wait();  // pulled(send, k-1): our spare buffer is no longer read
      pending_pulled_.reset();
    }
    // The block to pull is the receive peer's current one: its buffer index alternates with ours.
    const std::byte* source = receive_peer_buffers_[current_];
    std::byte* target = buffers_[1 - current_];
    device::check_cuda(cudaStreamWaitEvent(stream_, receive_peer_ready, 0), "cudaStreamWaitEvent");
    device::check_cuda(cudaStreamWaitEvent(stream_, step.ready, 0), "cudaStreamWaitEvent");
    if (send_peer_pulled_ != nullptr) {
      device::check_cuda(cudaStreamWaitEvent(stream_, send_peer_pulled_, 0), "cudaStreamWaitEvent");
    }
    pull(target, source);
    device::check_cuda(cudaEventRecord(step.pulled, transfer_ == RingTransfer::copy_engine ? upload_stream_ : stream_),
                       "cudaEventRecord");
    pending_pulled_ = recv_bytes(comm_, &send_peer_pulled_, sizeof(cudaEvent_t), peers_.send, tag + 1, label,
                                 MemoryKind::host);
    // The previous pulled() must have reached the receive peer before its slot is reused.
    if (pending_pulled_send_.has_value()) pending_pulled_send_->wait();
    outgoing_pulled_ = step.pulled;
    pending_pulled_send_ = send_bytes(comm_, &outgoing_pulled_, sizeof(cudaEvent_t), peers_.receive, tag + 1, label,
                                      MemoryKind::host);
    steps_.push_back(step);
    // Neighbours queue on an event during the step after it at the latest.
    while (steps_.size() > 3) {
      destroy(steps_.front());
      steps_.pop_front();
    }
    return comm_.make_work(std::make_shared<EventWork>(step.pulled, comm_.context(label, peers_.receive)));
  }

  void advance(StreamRef stream) override {
    const auto compute = static_cast<cudaStream_t>(stream.native_handle());
    device::check_cuda(cudaStreamWaitEvent(compute, steps_.back().pulled, 0), "cudaStreamWaitEvent");
    current_ = 1 - current_;
  }

 private:
  static cudaEvent_t new_event() {
    cudaEvent_t event = nullptr;
    device::check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    return event;
  }
  static void destroy(const StepEvents& step) {
    // Safe while queued waits still refer to them: CUDA releases them once they have completed.
    (void)cudaEventDestroy(step.ready);
    (void)cudaEventDestroy(step.pulled);
  }

  void pull(std::byte* target, const std::byte* source) {
    if (bytes_ == 0) return;
    if (transfer_ == RingTransfer::copy_engine) {
      // Down on the communication stream, up on the upload stream, each piece up as soon as it
      // is down: the two directions' engines work at once.
      for (std::size_t offset = 0; offset < bytes_; offset += kStagingPiece) {
        const std::size_t piece = std::min(kStagingPiece, bytes_ - offset);
        device::check_cuda(cudaMemcpyAsync(staging_ + offset, source + offset, piece, cudaMemcpyDeviceToHost, stream_),
                           "cudaMemcpyAsync");
        device::check_cuda(cudaEventRecord(piece_done_, stream_), "cudaEventRecord");
        device::check_cuda(cudaStreamWaitEvent(upload_stream_, piece_done_, 0), "cudaStreamWaitEvent");
        device::check_cuda(
            cudaMemcpyAsync(target + offset, staging_ + offset, piece, cudaMemcpyHostToDevice, upload_stream_),
            "cudaMemcpyAsync");
      }
      return;
    }
    device::copy_on_stream(target, source, bytes_, kCopyBlocks, StreamRef(stream_));
  }

  CommunicatorImpl& comm_;
  std::size_t bytes_;
  RingTransfer transfer_;
  RingPeers peers_;
  std::byte* buffers_[2] = {nullptr, nullptr};
  const std::byte* receive_peer_buffers_[2] = {nullptr, nullptr};
  std::byte* staging_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t upload_stream_ = nullptr;  // copy_engine: host to device
  cudaEvent_t piece_done_ = nullptr;      // copy_engine: a piece is down in host memory
  int current_ = 0;
  std::deque<StepEvents> steps_;
  std::optional<Work> pending_pulled_;       // pulled(send peer, k), received into send_peer_pulled_
  std::optional<Work> pending_pulled_send_;  // pulled(this rank, k), sent from outgoing_pulled_
  cudaEvent_t send_peer_pulled_ = nullptr;
  cudaEvent_t outgoing_ready_ = nullptr;   // message payloads: they must outlive their sends
  cudaEvent_t outgoing_pulled_ = nullptr;
  int finished_tag_ = 0;
};

}  // namespace

std::unique_ptr<RingTransport> make_device_ring(CommunicatorImpl& comm, const RingPipelineSpec& spec,
                                                RingPeers peers, RingTransfer transfer) {
  return std::make_unique<DeviceRing>(comm, spec, peers, transfer);
}

}  // namespace meshcomm::detail
