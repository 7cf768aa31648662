#include "communicator_impl.hpp"

#include <fmt/format.h>

#include <limits>

#include "device/device_runtime.hpp"
#include "eager/eager_mailbox.hpp"
#include "environment.hpp"

namespace meshcomm::detail {

namespace {
/// MESHCOMM_CHECK_POINTERS=1 checks CUDA pointers on every backend (as NCCL_CHECK_POINTERS does).
bool pointer_checks_forced() {
  static const bool forced = environment_variable("MESHCOMM_CHECK_POINTERS").value_or("0") == "1";
  return forced;
}
}  // namespace

CommunicatorImpl::CommunicatorImpl(std::unique_ptr<Backend> backend, std::vector<int> root_ranks,
                                   std::chrono::milliseconds timeout,
                                   std::shared_ptr<const CommunicatorFamily> family)
    : backend_(std::move(backend)),
      fatal_(backend_->fatal_state().get()),
      collectives_(family->collectives.get()),
      timeout_(timeout),
      backend_kind_(backend_->kind()),
      rank_(backend_->rank()),
      size_(backend_->size()),
      max_tag_(backend_->max_tag()),
      stream_ordered_(backend_->stream_ordered()),
      moves_host_(backend_->moves(MemoryKind::host)),
      moves_cuda_(backend_->moves(MemoryKind::cuda)),
      // Host-driven backends check that CUDA buffers are device memory; the stream-ordered nccl
      // backend leaves it to MESHCOMM_CHECK_POINTERS=1, as NCCL does, since the check costs as
      // much as a fifth of a small collective.
      checks_cuda_pointers_(!stream_ordered_ || pointer_checks_forced()),
      plainly_moved_{moves_host_, moves_cuda_ && !checks_cuda_pointers_},
      root_ranks_(std::move(root_ranks)),
      family_(std::move(family)),
      fingerprinted_tags_(backend_->max_tag() >= CollectiveTags::kLargest),
      recorder_(rank_, size_, root_ranks_.empty() ? rank_ : root_ranks_[static_cast<std::size_t>(rank_)],
                std::string(to_string(backend_kind_))) {}

int CommunicatorImpl::reserve_internal_tags(int count) {
  if (collective_window_ >= 0 && collective_slot_ + count <= CollectiveTags::kSlots) {
    const int first = collective_window_ + collective_slot_;
    collective_slot_ += count;
    return first;
  }
  // Other internal operations are issued in the same order on every rank, so a counter names
  // each one identically everywhere; wrapping is harmless since matching is FIFO per tag.
  const int largest = CollectiveTags::reserved(backend_->max_tag()) - 1;
  if (internal_tag_ > largest - count) internal_tag_ = 0;
  const int first = internal_tag_;
  internal_tag_ += count;
  return first;
}

void CommunicatorImpl::order_after_stream(MemoryKind memory, StreamRef stream) const {
  if (memory == MemoryKind::cuda && !stream_ordered_) device::synchronize(stream);
}

ErrorContext CommunicatorImpl::context(OperationLabel label, int peer) const {
  return {.backend = std::string(to_string(backend_->kind())), .operation = label.name, .rank = rank(), .peer = peer,
          .sequence = label.sequence};
}

void CommunicatorImpl::reject_peer(int peer, OperationLabel label) const {
  throw Error(ErrorCode::invalid_argument,
              fmt::format("peer = {} is not a rank of this communicator; valid peers are 0..{}", peer, size() - 1),
              context(label));
}

void CommunicatorImpl::reject_tag(int tag, OperationLabel label) const {
  throw Error(ErrorCode::invalid_argument,
              fmt::format("tag = {} is out of range; valid tags are 0..{}", tag, max_tag_), context(label));
}

void CommunicatorImpl::check_extent_fully(std::size_t count, DataType type, OperationLabel label,
                                          const char* argument) const {
  const std::size_t largest = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / size_of(type);
  if (count > largest) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}.count = {} elements of {} would be more bytes than any buffer can hold; at most {} "
                            "elements of {}",
                            argument, count, to_string(type), largest, to_string(type)),
                context(label));
  }
}

void CommunicatorImpl::check_buffer_fully(const void* data, std::size_t count, MemoryKind memory,
                                          OperationLabel label, const char* argument) const {
  if (data == nullptr && count > 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} has a null pointer but a count of {}; pass a valid pointer or a count of 0", argument,
                            count),
                context(label));
  }
  if (!(memory == MemoryKind::cuda ? moves_cuda_ : moves_host_)) {
    std::string takes;
    for (auto kind : {MemoryKind::host, MemoryKind::cuda}) {
      if (backend_->moves(kind)) takes += fmt::format("{}{}", takes.empty() ? "" : " or ", to_string(kind));
    }
    throw Error(ErrorCode::unsupported,
                fmt::format("{} is {} memory, which the {} backend cannot move; it takes {} memory", argument,
                            to_string(memory), to_string(backend_->kind()), takes),
                context(label));
  }
  if (memory == MemoryKind::cuda && count > 0 && checks_cuda_pointers_) {
    if (auto problem = device::pointer_problem(data); !problem.empty()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{} is marked as cuda memory but {}", argument, problem),
                  context(label));
    }
  }
}

void CommunicatorImpl::set_up_eager_mailbox() { eager_mailbox_ = EagerMailbox::create(*this, begin("create")); }

}  // namespace meshcomm::detail
