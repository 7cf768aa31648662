#pragma once

// Large messages between processes on one host, in one copy where that pays: the sender sends a
// small descriptor (where its buffer is); the receiver reads the buffer straight out of the
// sender's memory (process_vm_readv, as Open MPI's shared-memory transport does with CMA) or asks
// for the bytes as a tagged message; its answer completes the send (ucx_single_copy_protocol.hpp).
// UCX itself moves large messages through its shared-memory queues in two copies: its own CMA
// transport cannot report failed peers, so the error mode that names them leaves it out.

#include <cstdint>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "meshcomm/bootstrap.hpp"
#include "process_liveness.hpp"

namespace meshcomm::detail {

class UcxPeers;

/// Messages of at least this many bytes between single-copy peers go by descriptor, unless
/// MESHCOMM_UCX_SINGLE_COPY_BYTES says otherwise; below it a one-way message goes eagerly (UCX's
/// copies, start_tag_send), whose sender need not wait for an answer: at 92-128 KiB a two-rank
/// broadcast, the root sending call after call, took 0.52-0.67x the mpi backend's time eager
/// against 0.55-1.02x by descriptor (perftests/HISTORY.md). Exchanges' messages go by descriptor
/// from a smaller size (below).
inline constexpr std::size_t kSingleCopyBytes = std::size_t{128} << 10;

/// Messages of at least this many bytes go by descriptor where they leave while the sender
/// receives a message of this size or more (an exchange, a ring step), unless
/// MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES says otherwise; a one-way message below the threshold
/// above goes eagerly, and so does every message below it where the host's ranks outnumber its
/// cores (UcxPeers::exchange_single_copy_bytes). With both cores copying their own traffic, one
/// copy each beats UCX's two from about 32 KiB: in four alternated launches of two-rank
/// exchanges, eager ones took 0.68-0.84x the mpi backend's time at 16 KiB, 0.96-1.16x at 32 KiB
/// and 1.28-1.40x at 64 KiB; by descriptor 1.03-1.29x, 0.98-1.16x and 0.91-1.11x
/// (perftests/HISTORY.md). Receives from the smaller of the two sizes take a descriptor or the
/// message itself, by one tag whose mask leaves out the bit that tells them apart, so the sender
/// alone decides.
inline constexpr std::size_t kExchangeSingleCopyBytes = std::size_t{32} << 10;

/// What a rank tells the others so that they can read its memory.
struct SingleCopyIdentity {
  ProcessIdentity process;
  std::uint64_t user = 0;           ///< uid: only the same user may read another's memory
  std::uint64_t probe_address = 0;  ///< a word the peers read once, to learn whether they may
  std::uint64_t threshold = 0;      ///< the smallest message it sends by descriptor
  std::uint64_t exchange_threshold = 0;  ///< the smallest message of an exchange it sends so
};

/// How single-copy messages go among a communicator's ranks.
struct SingleCopyPlan {
  std::vector<char> peers;  ///< per rank: whether messages with it go by descriptor
  std::size_t threshold = kSingleCopyBytes;
  std::size_t exchange_threshold = kExchangeSingleCopyBytes;
  /// MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES set on this rank: its exchanges announce from that
  /// size even where the host's ranks outnumber its cores.
  bool exchange_threshold_given = false;
};

/// Whether two ranks run on one host, in one pid namespace, as one user: each can map the
/// other's UCX memory, and may read the other's.
bool same_host_and_user(const SingleCopyIdentity& a, const SingleCopyIdentity& b) noexcept;

/// This process's identity; allows same-user processes to read its memory where the kernel's
/// Yama policy would otherwise keep them out (as Open MPI does).
SingleCopyIdentity single_copy_identity();

/// For each rank of `identities` (gathered through `bootstrap`, this rank `self`): whether
/// messages with it go by descriptor, and from which size. Collective: every rank reads each
/// same-host peer's probe word, and a pair is enabled only where both ranks could read all
/// theirs (so both sides decide alike). MESHCOMM_UCX_SINGLE_COPY=0 on a rank turns it off for
/// its pairs; MESHCOMM_UCX_SINGLE_COPY_BYTES and MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES must be
/// the same on every rank (else Error(invalid_argument) naming a rank that differs).
SingleCopyPlan single_copy_plan(Bootstrap& bootstrap, const std::vector<SingleCopyIdentity>& identities, int self);

/// The UCX tags of one single-copy message: the descriptor (sender to receiver), the receiver's
/// answer, and the payload where the receiver asks for it (ucx_single_copy_protocol.hpp). The
/// receive of the descriptor takes, through `descriptor_or_message`, the message itself as well,
/// where the sender sends it eagerly instead (kExchangeSingleCopyBytes).
struct SingleCopyTags {
  std::uint64_t descriptor = 0;
  std::uint64_t acknowledgement = 0;
  std::uint64_t payload = 0;
  std::uint64_t descriptor_or_message = ~std::uint64_t{0};  ///< the descriptor receive's mask
};

/// A send by descriptor to root rank `root_peer`: complete once the receiver read the buffer or,
/// where it asked for them, took the bytes as a tagged message. `site` and `tag` are for errors.
std::shared_ptr<WorkState> start_single_copy_send(const std::shared_ptr<UcxPeers>& peers,
                                                  const std::shared_ptr<FatalState>& fatal, ConstBufferView data,
                                                  int root_peer, const SingleCopyTags& tags, const CallSite& site,
                                                  int tag);

/// A receive from root rank `root_peer` of a message that comes by descriptor or eagerly, as its
/// sender chose. A descriptor's bytes are read from the sender's buffer while this process sends a
/// large message of its own; a one-way message goes whichever way the process's
/// OneWayTransferChoice takes. Then it answers. Receives of exchanges below the single-copy
/// threshold time how their message came, for the process's ExchangeTransferChoice.
std::shared_ptr<WorkState> start_single_copy_receive(const std::shared_ptr<UcxPeers>& peers,
                                                     const std::shared_ptr<FatalState>& fatal, BufferView data,
                                                     int root_peer, const SingleCopyTags& tags, const CallSite& site,
                                                     int tag);

}  // namespace meshcomm::detail
