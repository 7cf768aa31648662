#include "meshcomm/communicator.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "algorithms.hpp"
#include "collective_engine.hpp"
#include "communicator_impl.hpp"
#include "dissemination_barrier.hpp"
#include "environment.hpp"
#include "meshcomm/bootstrap.hpp"
#include "setup_exchange.hpp"
#include "shared_memory/shared_segment.hpp"

namespace meshcomm {

std::string_view to_string(BackendKind kind) noexcept {
  switch (kind) {
    case BackendKind::automatic: return "automatic";
    case BackendKind::inproc: return "inproc";
    case BackendKind::mpi: return "mpi";
    case BackendKind::ucx: return "ucx";
    case BackendKind::nccl: return "nccl";
  }
  return "unknown";
}

Communicator Communicator::create(Bootstrap& bootstrap, const CommOptions& options) {
  const auto timeout = detail::resolve_timeout(options.timeout);
  auto backend = detail::create_backend(bootstrap, options.backend, timeout);
  // allocate_shared's memory comes from the backend: POSIX shared memory, or UCX's own on ucx.
  auto family = std::make_shared<const detail::CommunicatorFamily>(detail::CommunicatorFamily{
      detail::CollectiveEngine::from_environment(),
      std::make_shared<detail::SharedMemoryRegistry>(backend->segment_provider())});
  std::vector<int> root_ranks(static_cast<std::size_t>(backend->size()));
  std::iota(root_ranks.begin(), root_ranks.end(), 0);
  auto impl = std::make_unique<detail::CommunicatorImpl>(std::move(backend), std::move(root_ranks), timeout,
                                                         std::move(family));
  impl->set_up_eager_mailbox();
  return Communicator(std::move(impl));
}

Communicator::Communicator(std::unique_ptr<detail::CommunicatorImpl> impl) noexcept : impl_(std::move(impl)) {}
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

int Communicator::rank() const noexcept { return impl_->rank(); }
int Communicator::size() const noexcept { return impl_->size(); }
BackendKind Communicator::backend() const noexcept { return impl_->backend().kind(); }
std::chrono::milliseconds Communicator::timeout() const noexcept { return impl_->timeout(); }
std::span<const int> Communicator::root_ranks() const noexcept { return impl_->root_ranks(); }
int Communicator::max_tag() const noexcept { return impl_->backend().max_tag(); }

void Communicator::abort() noexcept {
  auto& backend = impl_->backend();
  const ErrorContext context{.backend = std::string(to_string(backend.kind())), .operation = "abort",
                             .rank = backend.rank()};
  backend.abort(Error(ErrorCode::aborted,
                      fmt::format("Communicator::abort() was called on rank {} of {}", backend.rank(), backend.size()),
                      context));
}

Communicator Communicator::split(int color, int key) const {
  auto& impl = *impl_;
  const auto label = impl.begin("split");
  if (color < 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("color = {} is negative; every rank must pass a color >= 0 (ranks with equal colors form "
                            "one communicator)",
                            color),
                impl.context(label));
  }
  const std::int32_t mine[2] = {color, key};
  auto gathered = detail::exchange_all_gather(impl, std::as_bytes(std::span(mine)), label);
  std::vector<std::int32_t> pairs(gathered.size() / sizeof(std::int32_t));
  std::memcpy(pairs.data(), gathered.data(), gathered.size());

  std::vector<int> members;
  for (int rank = 0; rank < size(); ++rank) {
    if (pairs[2 * rank] == color) members.push_back(rank);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return pairs[2 * a + 1] < pairs[2 * b + 1]; });

  auto backend = impl.backend().split(members, color, impl.next_split_index());
  std::vector<int> root_ranks;
  for (int member : members) root_ranks.push_back(impl.root_ranks()[member]);
  auto child = std::make_unique<detail::CommunicatorImpl>(std::move(backend), std::move(root_ranks), impl.timeout(),
                                                          impl.family());
  child->set_up_eager_mailbox();
  return Communicator(std::move(child));
}

Work Communicator::isend(ConstBufferView data, int peer, int tag, StreamRef stream) {
  auto& impl = *impl_;
  const auto label = impl.begin("isend");
  const auto recorded =
      impl.record({.operation = "isend", .sequence = label.sequence, .bytes = data.bytes(), .peer = peer});
  impl.check_peer(peer, label);
  impl.check_tag(tag, label);
  impl.check_buffer(data.data, data.count, data.memory, label, "data");
  impl.check_extent(data.count, data.type, label, "data");
  impl.order_after_stream(data.memory, stream);
  auto state = impl.backend().isend(data, peer, tag, detail::Lane::user, label, stream);
  if (state == nullptr) impl.record_completed(recorded);  // sent inside the call
  return impl.make_work(std::move(state), recorded);
}

Work Communicator::irecv(BufferView data, int peer, int tag, StreamRef stream) {
  auto& impl = *impl_;
  const auto label = impl.begin("irecv");
  const auto recorded =
      impl.record({.operation = "irecv", .sequence = label.sequence, .bytes = data.bytes(), .peer = peer});
  impl.check_peer(peer, label);
  impl.check_tag(tag, label);
  impl.check_buffer(data.data, data.count, data.memory, label, "data");
  impl.check_extent(data.count, data.type, label, "data");
  impl.order_after_stream(data.memory, stream);
  auto state = impl.backend().irecv(data, peer, tag, detail::Lane::user, label, stream);
  if (state == nullptr) impl.record_completed(recorded);  // received inside the call
  return impl.make_work(std::move(state), recorded);
}

Work Communicator::ibarrier() {
  auto& impl = *impl_;
  const auto label = impl.begin("barrier");
  // A barrier is a collective: its messages match only the same barrier on every rank.
  const std::uint64_t call = impl.next_collective();
  const auto recorded =
      impl.record({.operation = "barrier", .sequence = label.sequence, .collective = static_cast<std::int64_t>(call)});
  if (impl.eager_mailbox()) {
    // Ranks that share eager slots meet there, without messages: 0.14-0.16 us at two ranks on mpi
    // against 0.28-0.32 for the dissemination barrier (perftests/HISTORY.md, "Per-call overhead").
    auto state = detail::start_eager_barrier(impl, label, call);
    if (state == nullptr) impl.record_completed(recorded);  // every peer had arrived
    return impl.make_work(std::move(state), recorded);
  }
  const detail::CollectiveTagWindow tags(impl, detail::barrier_fingerprint(), call);
  return impl.make_work(detail::start_dissemination_barrier(impl, label), recorded);
}

void Communicator::barrier(std::chrono::milliseconds timeout) { ibarrier().wait(timeout); }

SharedBuffer Communicator::allocate_shared(std::size_t bytes) const {
  return SharedBuffer(impl_->shared_memory().create(bytes));
}

}  // namespace meshcomm
