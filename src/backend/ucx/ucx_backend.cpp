#include "ucx_backend.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "streaming_copy.hpp"
#include "ucx_operation.hpp"
#include "ucx_single_copy.hpp"

namespace meshcomm::detail {

namespace {

std::uint64_t lane_bits(Lane lane) noexcept { return lane == Lane::user ? 0 : 1; }

}  // namespace

SingleCopyTags UcxBackend::single_copy_tags(Lane lane, int sender, int receiver, int tag) const noexcept {
  return {.descriptor = UcxTag::make(context_, lane_bits(lane), sender, tag, UcxTag::kDescriptor),
          .acknowledgement = UcxTag::make(context_, lane_bits(lane), receiver, tag, UcxTag::kAcknowledgement),
          .payload = UcxTag::make(context_, lane_bits(lane), sender, tag, UcxTag::kPayload),
          .descriptor_or_message = UcxTag::kMessageOrDescriptorMask};
}

UcxBackend::UcxBackend(std::shared_ptr<UcxPeers> peers, std::shared_ptr<UcxSegments> segments,
                       std::vector<int> root_ranks, int rank, std::uint32_t context, std::chrono::milliseconds timeout)
    : peers_(std::move(peers)),
      segments_(std::move(segments)),
      root_ranks_(std::move(root_ranks)),
      rank_(rank),
      context_(context),
      timeout_(timeout) {}

std::shared_ptr<WorkState> UcxBackend::tag_send(const void* data, std::size_t bytes, int peer, int tag,
                                                std::uint64_t lane, OperationLabel label,
                                                FinishedInside finished_inside) {
  return start_tag_send(peers_, fatal_state(), data, bytes, root_ranks_[static_cast<std::size_t>(peer)],
                        UcxTag::make(context_, lane, rank_, tag), call_site(label, peer), tag, finished_inside);
}

std::shared_ptr<WorkState> UcxBackend::tag_receive(void* data, std::size_t bytes, int peer, int tag,
                                                   std::uint64_t lane, OperationLabel label,
                                                   FinishedInside finished_inside) {
  return start_tag_receive(peers_, fatal_state(), data, bytes, root_ranks_[static_cast<std::size_t>(peer)],
                           UcxTag::make(context_, lane, peer, tag), call_site(label, peer), tag, finished_inside);
}

std::shared_ptr<WorkState> UcxBackend::isend(ConstBufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                             StreamRef) {
  const int root_peer = root_ranks_[static_cast<std::size_t>(peer)];
  if (data.bytes() >= peers_->single_copy_receive_bytes() && peers_->single_copy(root_peer) &&
      announces(data.bytes())) {
    // The descriptor and payload go to the peer as from this rank; the answer comes back from it.
    return start_single_copy_send(peers_, fatal_state(), data, root_peer, single_copy_tags(lane, rank_, peer, tag),
                                  call_site(label, peer), tag);
  }
  // A small send UCX finishes inside the call costs no operation (nor its allocation).
  return tag_send(data.data, data.bytes(), peer, tag, lane_bits(lane), label, FinishedInside::null);
}

bool UcxBackend::announces(std::size_t bytes) const {
  if (bytes >= peers_->single_copy_bytes()) return true;
  // Below the threshold only an exchange's messages go by descriptor: a one-way message's sender
  // would only wait for the answer, while UCX's eager copies run on both cores at once.
  return bytes >= peers_->exchange_single_copy_bytes() && peers_->worker().large_receives_in_flight() > 0;
}

std::shared_ptr<WorkState> UcxBackend::irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                             StreamRef) {
  const int root_peer = root_ranks_[static_cast<std::size_t>(peer)];
  if (data.bytes() >= peers_->single_copy_receive_bytes() && peers_->single_copy(root_peer)) {
    return start_single_copy_receive(peers_, fatal_state(), data, root_peer, single_copy_tags(lane, peer, rank_, tag),
                                     call_site(label, peer), tag);
  }
  // A message already there costs no operation either, where UCX says its length.
  return tag_receive(data.data, data.bytes(), peer, tag, lane_bits(lane), label, FinishedInside::null);
}

std::shared_ptr<WorkState> UcxBackend::put(ConstBufferView source, int peer, const std::string& handle,
                                           std::size_t offset, OperationLabel label) {
  const int root_peer = root_ranks_[static_cast<std::size_t>(peer)];
  const auto& target = segments_->remote(handle);
  if (target.owner != root_peer || offset > target.bytes || source.bytes() > target.bytes - offset) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("a put of {} bytes at offset {} into peer {}'s memory does not fit the segment it names "
                            "(root rank {}'s, {} bytes)",
                            source.bytes(), offset, peer, target.owner, target.bytes),
                context(label, peer));
  }
  // A same-host peer's segment is mapped into this process: the bytes are copied there at once,
  // with the stores that measured faster (a put from UCX stores plainly), and are in place
  // before any later message to the peer leaves (streaming_copy fences its stores).
  if (void* mapped = nullptr; ucp_rkey_ptr(target.key, target.address + offset, &mapped) == UCS_OK) {
    copy_into_peer_memory(mapped, source.data, source.bytes(), PeerReadCopy::put);
    return nullptr;
  }
  const ucp_ep_h endpoint = peers_->endpoint(root_peer);
  ucp_request_param_t param{};
  auto put = ucp_put_nbx(endpoint, source.data, source.bytes(), target.address + offset, target.key, &param);
  if (UCS_PTR_IS_PTR(put)) ucp_request_free(put);  // the flush below completes after it
  // The flush completes once every earlier operation on the endpoint is in place remotely.
  auto flushed = UCS_PTR_IS_ERR(put) ? put : ucp_ep_flush_nbx(endpoint, &param);
  return make_recycled<UcxOperation>(
      UcxOperation::Description{.transfer = UcxOperation::Transfer::put, .peer = peer, .root_peer = root_peer,
                                .tag = -1, .bytes = source.bytes(), .site = call_site(label, peer)},
      flushed, peers_, fatal_state());
}

std::uint32_t UcxBackend::agree_on_context(std::uint64_t split_index) {
  const OperationLabel label{.name = "split", .sequence = -1};
  const int tag = static_cast<int>(split_index & static_cast<std::uint64_t>(UcxTag::kMaxTag));
  const std::uint32_t mine = peers_->worker().propose_context(context_ + 1);
  std::vector<std::uint32_t> theirs(root_ranks_.size(), mine);
  std::vector<std::shared_ptr<WorkState>> works;
  for (int peer = 0; peer < size(); ++peer) {
    if (peer == rank_) continue;
    works.push_back(tag_send(&mine, sizeof mine, peer, tag, UcxTag::kSetupLane, label));
    works.push_back(tag_receive(&theirs[static_cast<std::size_t>(peer)], sizeof mine, peer, tag, UcxTag::kSetupLane,
                                label));
  }
  const auto deadline = deadline_after(timeout_);
  std::vector<int> silent;
  for (std::size_t index = 0; index < works.size(); ++index) {
    try {
      works[index]->wait_until(deadline);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::timeout) throw;
      silent.push_back(error.context().peer);
    }
  }
  if (!silent.empty()) {
    std::sort(silent.begin(), silent.end());
    silent.erase(std::unique(silent.begin(), silent.end()), silent.end());
    throw Error(ErrorCode::timeout,
                fmt::format("{} {} not joined this split within {} ms: every rank of the communicator must call it",
                            silent.size() == 1 ? "rank" : "ranks", fmt::join(silent, ", "),
                            silent.size() == 1 ? "has" : "have", timeout_.count()),
                {.backend = "ucx", .operation = "split", .rank = rank_, .peer = silent.front()});
  }
  const auto agreed = *std::max_element(theirs.begin(), theirs.end());
  if (agreed > UcxTag::kMaxContext) {
    throw Error(ErrorCode::unsupported,
                fmt::format("this process has made {} ucx communicators, the most its tags can tell apart", agreed),
                {.backend = "ucx", .operation = "split", .rank = rank_});
  }
  peers_->worker().take_context(agreed);
  return agreed;
}

std::unique_ptr<Backend> UcxBackend::split(std::span<const int> members, int /*color*/, std::uint64_t split_index) {
  const std::uint32_t context = agree_on_context(split_index);
  std::vector<int> root_ranks;
  root_ranks.reserve(members.size());
  for (int member : members) root_ranks.push_back(root_ranks_[static_cast<std::size_t>(member)]);
  const int new_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  return std::make_unique<UcxBackend>(peers_, segments_, std::move(root_ranks), new_rank, context, timeout_);
}

std::unique_ptr<Backend> make_ucx_backend(Bootstrap& bootstrap, std::chrono::milliseconds timeout) {
  if (bootstrap.size() > UcxTag::kMaxRanks) {
    throw Error(ErrorCode::unsupported,
                fmt::format("the ucx backend's tags hold {} ranks; this job has {}", UcxTag::kMaxRanks,
                            bootstrap.size()),
                {.backend = "ucx", .operation = "create"});
  }
  std::uint32_t context = 0;
  auto peers = std::make_shared<UcxPeers>(UcxWorker::instance(), bootstrap, context);
  std::vector<int> root_ranks(static_cast<std::size_t>(bootstrap.size()));
  std::iota(root_ranks.begin(), root_ranks.end(), 0);
  auto segments = std::make_shared<UcxSegments>(peers, bootstrap.rank());
  return std::make_unique<UcxBackend>(std::move(peers), std::move(segments), std::move(root_ranks), bootstrap.rank(),
                                      context, timeout);
}

}  // namespace meshcomm::detail
