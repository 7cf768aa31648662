#include "ucx_segments.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace meshcomm::detail {

namespace {

const ErrorContext kAllocate{.backend = "ucx", .operation = "allocate_shared"};

/// The fixed part of a handle; the packed remote key follows it.
struct HandleHeader {
  std::int32_t owner = 0;
  std::uint32_t key_bytes = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

}  // namespace

UcxSegments::UcxSegments(std::shared_ptr<UcxPeers> peers, int root_rank)
    : peers_(std::move(peers)), root_rank_(root_rank) {}

UcxSegments::~UcxSegments() {
  for (auto& [handle, remote] : remotes_) ucp_rkey_destroy(remote.key);
}

SegmentProvider::Allocation UcxSegments::allocate(std::size_t bytes) {
  ucp_context_h context = peers_->worker().context();
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.length = std::max<std::size_t>(bytes, 1);
  params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memory = nullptr;
  check_ucs(ucp_mem_map(context, &params, &memory), "ucp_mem_map", kAllocate);
  ucp_mem_attr_t attributes{};
  attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  void* packed = nullptr;
  std::size_t packed_bytes = 0;
  auto status = ucp_mem_query(memory, &attributes);
  if (status == UCS_OK) status = ucp_rkey_pack(context, memory, &packed, &packed_bytes);
  if (status != UCS_OK) {
    ucp_mem_unmap(context, memory);
    check_ucs(status, "ucp_rkey_pack", kAllocate);
  }
  const HandleHeader header{.owner = root_rank_, .key_bytes = static_cast<std::uint32_t>(packed_bytes),
                            .address = reinterpret_cast<std::uint64_t>(attributes.address),
                            .bytes = attributes.length};
  std::string handle(sizeof header + packed_bytes, '\0');
  std::memcpy(handle.data(), &header, sizeof header);
  std::memcpy(handle.data() + sizeof header, packed, packed_bytes);
  ucp_rkey_buffer_release(packed);
  if (handle.size() > kMaxHandle) {
    ucp_mem_unmap(context, memory);
    throw Error(ErrorCode::unsupported,
                fmt::format("UCX's remote key for this memory takes {} bytes; meshcomm sends at most {}",
                            packed_bytes, kMaxHandle - sizeof header),
                kAllocate);
  }
  return {.base = static_cast<std::byte*>(attributes.address), .bytes = attributes.length, .handle = std::move(handle),
          .release = [peers = peers_, memory] { ucp_mem_unmap(peers->worker().context(), memory); }};
}

const UcxSegments::Remote& UcxSegments::remote(const std::string& handle) {
  std::lock_guard lock(mutex_);
  if (auto found = remotes_.find(handle); found != remotes_.end()) {
    found->second.used = ++clock_;
    return found->second;
  }
  if (remotes_.size() >= kRemembered) {
    // A freed segment stays mapped while a peer keeps its key: forget the stalest one.
    auto stalest = std::min_element(remotes_.begin(), remotes_.end(),
                                    [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
    ucp_rkey_destroy(stalest->second.key);
    remotes_.erase(stalest);
  }
  HandleHeader header;
  if (handle.size() < sizeof header) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("a segment handle of {} bytes is not one the ucx backend made", handle.size()), kAllocate);
  }
  std::memcpy(&header, handle.data(), sizeof header);
  if (sizeof header + header.key_bytes != handle.size() || header.owner < 0 || header.owner >= peers_->size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("a segment handle of {} bytes (owner {}, key of {} bytes) is not one the ucx backend made",
                            handle.size(), header.owner, header.key_bytes),
                kAllocate);
  }
  Remote remote{.owner = header.owner, .address = header.address, .bytes = header.bytes, .used = ++clock_};
  check_ucs(ucp_ep_rkey_unpack(peers_->endpoint(header.owner), handle.data() + sizeof header, &remote.key),
            "ucp_ep_rkey_unpack", {.backend = "ucx", .operation = "allocate_shared", .peer = header.owner});
  return remotes_.emplace(handle, remote).first->second;
}

std::byte* UcxSegments::attach(const std::string& handle) {
  const auto& segment = remote(handle);
  void* local = nullptr;
  check_ucs(ucp_rkey_ptr(segment.key, segment.address, &local), "ucp_rkey_ptr",
            {.backend = "ucx", .operation = "allocate_shared", .peer = segment.owner});
  return static_cast<std::byte*>(local);
}

}  // namespace meshcomm::detail
