#include "meshcomm/ring_pipeline.hpp"

#include <fmt/format.h>

#include <string>

#include "communicator_impl.hpp"
#include "meshcomm/communicator.hpp"
#include "patterns/ring.hpp"
#include "ring_transport.hpp"

namespace meshcomm {

std::string_view to_string(RingTransfer transfer) noexcept {
  switch (transfer) {
    case RingTransfer::automatic: return "automatic";
    case RingTransfer::messages: return "messages";
    case RingTransfer::sm_copy: return "sm_copy";
    case RingTransfer::copy_engine: return "copy_engine";
  }
  return "unknown";
}

namespace detail {

namespace {

/// The transfer `spec` asks for, made concrete; errors name what would be valid.
RingTransfer resolve_transfer(const CommunicatorImpl& comm, const RingPipelineSpec& spec) {
  // Ranks that share a GPU: threads (inproc), or processes on one node (mpi, through CUDA IPC).
  const auto backend = comm.backend().kind();
  const bool device_ring_possible =
      spec.memory == MemoryKind::cuda && (backend == BackendKind::inproc || backend == BackendKind::mpi);
  if (spec.transfer == RingTransfer::automatic) {
    return device_ring_possible ? RingTransfer::copy_engine : RingTransfer::messages;
  }
  if (spec.transfer != RingTransfer::messages && !device_ring_possible) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("transfer = {} needs cuda memory on the inproc or mpi backend (ranks sharing a GPU), "
                            "not {} memory on {}; use messages",
                            to_string(spec.transfer), to_string(spec.memory), to_string(comm.backend().kind())),
                {.operation = "RingPipeline::create"});
  }
  return spec.transfer;
}

}  // namespace

/// The peers, the step in flight, and the transport that moves the blocks.
class RingPipelineImpl {
 public:
  RingPipelineImpl(Communicator& comm, const RingPipelineSpec& spec) : comm_(comm.impl()) {
    if (spec.block_bytes == 0) {
      throw Error(ErrorCode::invalid_argument,
                  "spec.block_bytes = 0: a ring's block must hold at least one byte (K and V of this rank's rows)",
                  comm_.context(comm_.begin("RingPipeline::create")));
    }
    const int rank = comm.rank();
    const int size = comm.size();
    const bool forward = spec.direction == RingDirection::forward;
    peers_ = {.send = forward ? ring_right(rank, size) : ring_left(rank, size),
              .receive = forward ? ring_left(rank, size) : ring_right(rank, size)};
    const RingTransfer transfer = resolve_transfer(comm_, spec);
    if (transfer == RingTransfer::messages) {
      // The backend moves the blocks: it must take their memory.
      comm_.check_buffer(nullptr, 0, spec.memory, comm_.begin("RingPipeline::create"), "spec.memory");
      transport_ = make_message_ring(comm_, spec, peers_);
    } else {
      transport_ = make_device_ring(comm_, spec, peers_, transfer);
    }
  }

  std::span<std::byte> current() noexcept { return transport_->current(); }

  Work start(StreamRef stream) {
    const auto label = comm_.begin("ring step");
    throw_if_failed(label);
    if (in_flight_) {
      throw Error(ErrorCode::invalid_argument,
                  "RingPipeline::start called while the previous transfer is in flight; wait for its Work and call "
                  "advance() first",
                  comm_.context(label));
    }
    auto work = transport_->start(label, stream);
    in_flight_ = true;
    return work;
  }

  void advance(StreamRef stream) {
    const OperationLabel label{.name = "ring step"};  // part of the step start() numbered
    throw_if_failed(label);
    if (!in_flight_) {
      throw Error(ErrorCode::invalid_argument, "RingPipeline::advance called with no transfer started",
                  comm_.context(label));
    }
    try {
      transport_->advance(stream);
    } catch (const Error& error) {
      // The transfer may still write the other buffer: this pipeline cannot be trusted again.
      failure_ = error.what();
      throw;
    }
    in_flight_ = false;
  }

  RingPeers peers_{};

 private:
  void throw_if_failed(OperationLabel label) const {
    if (failure_.empty()) return;
    throw Error(ErrorCode::aborted,
                "this RingPipeline's transfer failed earlier (" + failure_ +
                    "), and it may still write the pipeline's buffers: destroy the pipeline and create a new one",
                comm_.context(label));
  }

  CommunicatorImpl& comm_;
  bool in_flight_ = false;
  std::string failure_;  ///< the first failed transfer's error, after which every call fails
  std::unique_ptr<RingTransport> transport_;
};

}  // namespace detail

RingPipeline RingPipeline::create(Communicator& comm, const RingPipelineSpec& spec) {
  return RingPipeline(std::make_unique<detail::RingPipelineImpl>(comm, spec));
}

RingPipeline::RingPipeline(std::unique_ptr<detail::RingPipelineImpl> impl) noexcept : impl_(std::move(impl)) {}
RingPipeline::RingPipeline(RingPipeline&&) noexcept = default;
RingPipeline& RingPipeline::operator=(RingPipeline&&) noexcept = default;
RingPipeline::~RingPipeline() = default;
std::span<std::byte> RingPipeline::current() noexcept { return impl_->current(); }
Work RingPipeline::start(StreamRef stream) { return impl_->start(stream); }
void RingPipeline::advance(StreamRef stream) { impl_->advance(stream); }
int RingPipeline::send_peer() const noexcept { return impl_->peers_.send; }
int RingPipeline::recv_peer() const noexcept { return impl_->peers_.receive; }

}  // namespace meshcomm
