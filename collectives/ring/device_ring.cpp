// A ring of ranks sharing one GPU (inproc threads, or processes on one node through CUDA IPC),
// driven by streams and events: each step, a rank pulls the block its receive peer holds into
// its own spare buffer on a communication stream, while its compute stream works on the current
// block. Two events per rank and step order the buffers between ranks:
//
//   ready(r, k)   r's compute stream has finished with its spare buffer and its current block is
//                 final: the pull of step k into r and the pull of step k from r may start;
//   pulled(r, k)  r's pull of step k is done: its receive peer may overwrite the block it gave.
//
// Step k on rank r: record ready(r, k) and signal the send peer; take the receive peer's
// ready(k) and the send peer's pulled(k-1) signals; queue the copy behind all three events on the
// communication stream; record pulled(r, k) and signal the receive peer. The signals are small
// host messages that only say "recorded": the events themselves were exchanged once, at
// creation, in slots reused every kSlots steps (a neighbour has queued its wait on a slot's
// previous use two steps later at most). Every receive is posted before any wait that depends on
// a neighbour, so no cycle of waits can form around the ring. `advance` makes the compute stream
// wait for pulled(r, k): no host synchronisation with the GPU anywhere.

#include <cuda_runtime_api.h>

#include <optional>

#include <fmt/format.h>

#include "device/cuda_check.hpp"
#include "device/device_runtime.hpp"
#include "device/event_work.hpp"
#include "device_peers.hpp"
#include "internal_p2p.hpp"
#include "ring_transport.hpp"

namespace meshcomm::detail {

namespace {

/// CTAs of the sm_copy kernel: enough for a few hundred GB/s, few enough to leave the compute
/// most of the SMs.
constexpr int kCopyBlocks = 8;

/// Pieces of a copy-engine transfer: device to host and host to device run at once on two
/// engines, a piece apart.
constexpr std::size_t kStagingPiece = std::size_t{4} << 20;

/// Event slots per kind, reused round-robin.
constexpr int kSlots = 4;

class DeviceRing final : public RingTransport {
 public:
  DeviceRing(CommunicatorImpl& comm, const RingPipelineSpec& spec, RingPeers peers, RingTransfer transfer)
      : comm_(comm),
        bytes_(spec.block_bytes),
        transfer_(transfer),
        peers_(peers),
        shared_(comm, comm.backend().kind() != BackendKind::inproc) {
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
      device::check_cuda(cudaEventCreateWithFlags(&piece_done_, cudaEventDisableTiming), "cudaEventCreate");
      device::check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&staging_), size, cudaHostAllocDefault),
                         "cudaHostAlloc");
    }
    for (int slot = 0; slot < kSlots; ++slot) {
      ready_[slot] = shared_.new_event();
      pulled_[slot] = shared_.new_event();
    }
    const auto label = comm_.begin("RingPipeline::create");
    const auto peer_buffers = shared_.open_buffers(buffers_, peers_.receive, label);
    receive_peer_buffers_[0] = peer_buffers[0];
    receive_peer_buffers_[1] = peer_buffers[1];
    const auto peer_ready = shared_.open_events(ready_, peers_.receive, label);
    const auto peer_pulled = shared_.open_events(pulled_, peers_.send, label);
    std::copy(peer_ready.begin(), peer_ready.end(), receive_peer_ready_);
    std::copy(peer_pulled.begin(), peer_pulled.end(), send_peer_pulled_);
    finished_tag_ = comm_.reserve_internal_tags(1);
  }

  /// Collective: the send peer may still be pulling from our buffers. Each rank finishes its own
  /// pulls, tells its receive peer so, and frees its buffers once its send peer has said the
  /// same (each wait bounded by the timeout; errors cannot leave a destructor).
  ~DeviceRing() override {
    (void)cudaStreamSynchronize(stream_);
    if (upload_stream_ != nullptr) (void)cudaStreamSynchronize(upload_stream_);
    const OperationLabel label{.name = "RingPipeline destroy"};
    try {
      if (pulled_signal_in_.has_value()) pulled_signal_in_->wait(comm_.timeout());
      if (pulled_signal_out_.has_value()) pulled_signal_out_->wait(comm_.timeout());
      const std::int64_t done = -1;
      std::int64_t peer_done = 0;
      auto told = send_bytes(comm_, &done, sizeof done, peers_.receive, finished_tag_, label, MemoryKind::host);
      recv_bytes(comm_, &peer_done, sizeof peer_done, peers_.send, finished_tag_, label, MemoryKind::host)
          .wait(comm_.timeout());
      told.wait(comm_.timeout());
    } catch (const Error&) {
    }
    for (int slot = 0; slot < kSlots; ++slot) {
      (void)cudaEventDestroy(ready_[slot]);
      (void)cudaEventDestroy(pulled_[slot]);
    }
    for (auto* buffer : buffers_) device::release(buffer);
    if (staging_ != nullptr) (void)cudaFreeHost(staging_);
    if (upload_stream_ != nullptr) {
      (void)cudaStreamDestroy(upload_stream_);
      (void)cudaEventDestroy(piece_done_);
    }
    (void)cudaStreamDestroy(stream_);
  }

  std::span<std::byte> current() noexcept override { return {buffers_[current_], bytes_}; }

  Work start(OperationLabel label, StreamRef stream) override {
    const auto compute = static_cast<cudaStream_t>(stream.native_handle());
    const int slot = static_cast<int>(step_ % kSlots);
    device::check_cuda(cudaEventRecord(ready_[slot], compute), "cudaEventRecord");
    const int tag = comm_.reserve_internal_tags(2);
    ready_signal_out_ = step_;
    auto ready_sent =
        send_bytes(comm_, &ready_signal_out_, sizeof step_, peers_.send, tag, label, MemoryKind::host);
    std::int64_t peer_step = -1;
    recv_bytes(comm_, &peer_step, sizeof peer_step, peers_.receive, tag, label, MemoryKind::host).wait();
    expect_step(peer_step, step_, "ready", label);
    ready_sent.wait();
    if (pulled_signal_in_.has_value()) {
      pulled_signal_in_->wait();  // pulled(send, k-1) is recorded: our spare buffer's reader is queued
      pulled_signal_in_.reset();
      expect_step(pulled_step_in_, step_ - 1, "pulled", label);
    }
    // The block to pull is the receive peer's current one: its buffer index alternates with ours.
    const std::byte* source = receive_peer_buffers_[current_];
    std::byte* target = buffers_[1 - current_];
    device::check_cuda(cudaStreamWaitEvent(stream_, receive_peer_ready_[slot], 0), "cudaStreamWaitEvent");
    device::check_cuda(cudaStreamWaitEvent(stream_, ready_[slot], 0), "cudaStreamWaitEvent");
    if (step_ > 0) {
      const int previous = static_cast<int>((step_ - 1) % kSlots);
      device::check_cuda(cudaStreamWaitEvent(stream_, send_peer_pulled_[previous], 0), "cudaStreamWaitEvent");
    }
    pull(target, source);
    device::check_cuda(
        cudaEventRecord(pulled_[slot], transfer_ == RingTransfer::copy_engine ? upload_stream_ : stream_),
        "cudaEventRecord");
    pulled_signal_in_ =
        recv_bytes(comm_, &pulled_step_in_, sizeof pulled_step_in_, peers_.send, tag + 1, label, MemoryKind::host);
    // The previous signal must have been taken before its payload is reused.
    if (pulled_signal_out_.has_value()) pulled_signal_out_->wait();
    pulled_step_out_ = step_;
    pulled_signal_out_ =
        send_bytes(comm_, &pulled_step_out_, sizeof step_, peers_.receive, tag + 1, label, MemoryKind::host);
    ++step_;
    return comm_.make_work(std::make_shared<EventWork>(pulled_[slot], comm_.context(label, peers_.receive),
                                                                  "the ring step's device copy"));
  }

  void advance(StreamRef stream) override {
    const auto compute = static_cast<cudaStream_t>(stream.native_handle());
    const int slot = static_cast<int>((step_ - 1) % kSlots);
    device::check_cuda(cudaStreamWaitEvent(compute, pulled_[slot], 0), "cudaStreamWaitEvent");
    current_ = 1 - current_;
  }

 private:
  void expect_step(std::int64_t got, std::int64_t expected, const char* signal, OperationLabel label) const {
    if (got == expected) return;
    throw Error(ErrorCode::internal,
                fmt::format("ring {} signal for step {} arrived at step {}: the ranks' RingPipeline calls are out "
                            "of step",
                            signal, got, expected),
                comm_.context(label));
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
  DevicePeers shared_;
  std::byte* buffers_[2] = {nullptr, nullptr};
  std::byte* receive_peer_buffers_[2] = {nullptr, nullptr};
  cudaEvent_t ready_[kSlots] = {};
  cudaEvent_t pulled_[kSlots] = {};
  cudaEvent_t receive_peer_ready_[kSlots] = {};
  cudaEvent_t send_peer_pulled_[kSlots] = {};
  std::byte* staging_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t upload_stream_ = nullptr;  // copy_engine: host to device
  cudaEvent_t piece_done_ = nullptr;      // copy_engine: a piece is down in host memory
  int current_ = 0;
  std::int64_t step_ = 0;
  // Signal payloads (step numbers): they must outlive their messages.
  std::int64_t ready_signal_out_ = 0;
  std::int64_t pulled_step_out_ = 0;
  std::int64_t pulled_step_in_ = 0;
  std::optional<Work> pulled_signal_in_;   // pulled(send peer, k), received into pulled_step_in_
  std::optional<Work> pulled_signal_out_;  // pulled(this rank, k), sent from pulled_step_out_
  int finished_tag_ = 0;
};

}  // namespace

std::unique_ptr<RingTransport> make_device_ring(CommunicatorImpl& comm, const RingPipelineSpec& spec,
                                                RingPeers peers, RingTransfer transfer) {
  return std::make_unique<DeviceRing>(comm, spec, peers, transfer);
}

}  // namespace meshcomm::detail
