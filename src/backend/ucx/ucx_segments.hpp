#pragma once

#include <ucp/api/ucp.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "shared_memory/shared_segment.hpp"
#include "ucx_peers.hpp"

namespace meshcomm::detail {

/// allocate_shared on the ucx backend: memory UCX allocates itself (ucp_mem_map with
/// UCP_MEM_MAP_ALLOCATE), so that a peer's put into it is a direct store rather than a
/// software-emulated one, and the remote key to reach it. A peer on the node maps it through
/// its key (ucp_rkey_ptr) for the shm collectives; any peer puts into it (UcxBackend::put).
///
/// A handle is the owner's root rank, the memory's address and size, and the packed key.
class UcxSegments final : public SegmentProvider {
 public:
  /// A peer's segment as a put needs it: the key is unpacked on the endpoint to its owner once.
  struct Remote {
    int owner = 0;  ///< root rank
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
    ucp_rkey_h key = nullptr;
    std::uint64_t used = 0;  ///< when it was last asked for (the cache's clock)
  };
  /// Peers' segments kept unpacked (and mapped) at most; the least recently used go first.
  static constexpr std::size_t kRemembered = 1024;

  /// `root_rank` is this process's rank among `peers`.
  UcxSegments(std::shared_ptr<UcxPeers> peers, int root_rank);
  ~UcxSegments() override;

  Allocation allocate(std::size_t bytes) override;
  std::byte* attach(const std::string& handle) override;

  /// The segment `handle` names. Throws Error(invalid_argument) if it is not a ucx handle.
  const Remote& remote(const std::string& handle);

 private:
  std::shared_ptr<UcxPeers> peers_;
  int root_rank_;
  std::mutex mutex_;
  std::map<std::string, Remote> remotes_;  // handle -> unpacked key (destroyed with the provider)
  std::uint64_t clock_ = 0;
};

}  // namespace meshcomm::detail
