#include "meshcomm/ring_pipeline.hpp"

#include <fmt/format.h>

#include "communicator_impl.hpp"
#include "internal_p2p.hpp"
#include "meshcomm/communicator.hpp"
#include "patterns/ring.hpp"
#include "progress_thread.hpp"

namespace meshcomm {

namespace detail {

/// The two buffers, the peers, and the transfer in flight.
class RingPipelineImpl {
 public:
  RingPipelineImpl(Communicator& comm, const RingPipelineSpec& spec)
      : comm_(comm.impl()), bytes_(spec.block_bytes) {
    const int rank = comm.rank();
    const int size = comm.size();
    const bool forward = spec.direction == RingDirection::forward;
    send_peer_ = forward ? ring_right(rank, size) : ring_left(rank, size);
    recv_peer_ = forward ? ring_left(rank, size) : ring_right(rank, size);
    buffers_[0] = std::make_unique<std::byte[]>(std::max<std::size_t>(bytes_, 1));
    buffers_[1] = std::make_unique<std::byte[]>(std::max<std::size_t>(bytes_, 1));
    if (spec.progress_thread && comm_.backend().thread_safe()) progress_ = std::make_unique<ProgressThread>();
  }

  std::span<std::byte> current() noexcept { return {buffers_[current_].get(), bytes_}; }

  Work start() {
    const auto label = comm_.begin("ring step");
    if (in_flight_) {
      throw Error(ErrorCode::invalid_argument,
                  "RingPipeline::start called while the previous transfer is in flight; call advance() after its "
                  "Work completes first",
                  comm_.context(label));
    }
    in_flight_ = true;
    const int tag = comm_.reserve_internal_tags(1);
    std::vector<Work> parts;
    parts.push_back(recv_bytes(comm_, buffers_[1 - current_].get(), bytes_, recv_peer_, tag, label, MemoryKind::host));
    parts.push_back(send_bytes(comm_, buffers_[current_].get(), bytes_, send_peer_, tag, label, MemoryKind::host));
    std::shared_ptr<WorkState> transfer = std::make_shared<GroupWorkState>(std::move(parts));
    if (progress_ != nullptr) transfer = progress_->drive(std::move(transfer), comm_.timeout());
    return comm_.make_work(std::move(transfer));
  }

  void advance() {
    if (!in_flight_) {
      throw Error(ErrorCode::invalid_argument, "RingPipeline::advance called with no transfer started",
                  {.operation = "ring step"});
    }
    in_flight_ = false;
    current_ = 1 - current_;
  }

  int send_peer_ = 0;
  int recv_peer_ = 0;

 private:
  CommunicatorImpl& comm_;
  std::size_t bytes_;
  std::unique_ptr<std::byte[]> buffers_[2];
  int current_ = 0;
  bool in_flight_ = false;
  std::unique_ptr<ProgressThread> progress_;  // last: joined before the buffers go
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
Work RingPipeline::start() { return impl_->start(); }
void RingPipeline::advance() { impl_->advance(); }
int RingPipeline::send_peer() const noexcept { return impl_->send_peer_; }
int RingPipeline::recv_peer() const noexcept { return impl_->recv_peer_; }

}  // namespace meshcomm
