#pragma once

// An all_to_allv in the eager slots (eager_mailbox.hpp). Each rank's payload starts with a table,
// one entry per rank: where the block it sends that rank lies in the payload, how many bytes it
// sends and how many it expects back. The blocks follow, its own left out (it copies that one
// from its input), where they all fit the slot; a flag before the table says whether they did, or
// that they stay in the rank's input, whatever their size, where its peers read them
// (PayloadWay), each entry's place then being the block's in the input. Blocks that do not fit
// stay there wherever the peers may read them (EagerStoreChoice::reads_from_writer()); only where
// they may not (MESHCOMM_EAGER_PEER_READS=never, or a kernel that forbids the reads) do they
// overflow, and the call goes to pairwise.
// The counts differ by rank, so whether they fit is only known once every rank's table is read:
// then every rank takes its blocks from the slots or the inputs, or, where some rank's
// overflowed, every rank alike hands the call over (EagerMailbox::take_handed_over). The tables
// also let both ranks of a pair that disagree about a count fail, naming each other, before any
// block is read.
// A rank whose blocks and counts are small enough writes a compact table instead (a byte of what
// it sends and one of what it expects per peer, the places left out: the blocks follow in rank
// order) where table and blocks fit the slot's inline bytes, the line of its header: a reader then
// takes the call from that one line (at two ranks, 8 B blocks: the header and the table's line had
// made two). At two ranks a rank whose blocks pass those bytes but fit its slot, and whose counts
// fit two bytes each, writes a short table into the first word of the inline bytes instead, its
// block for the peer in the slot's payload bytes, where the full table would start (at 8 B a peer, the
// full table's entries had taken 56 bytes of the lines a reader pulls). The payload's first
// byte says which form it is in.
// A rank whose blocks overflow starts the takeover at once; the others start it once they have
// read its table, which waits for the last rank to publish. Where the last call was handed over
// for want of room, and its own blocks have not shrunk enough since for the largest rank's then
// to fit, a rank expects the next one to be too (AllToAllvOverflowForecast), says so in its
// table, whose blocks it then leaves out, and starts the takeover at once as well.

#include <cstddef>
#include <optional>
#include <span>

#include "collective_args.hpp"
#include "eager_store_choice.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// The most bytes of blocks a rank writes into its slot where the ranks are two, and where they
/// outnumber their cores; past them its peers read its blocks from its input. Above them the
/// slots' two copies of each block (in, then out) lost to Open MPI's one (2026-11-28,
/// `alltoallv_perf --algo auto,eager,pairwise`, -n 200-300, 2-4 launches a size). At two ranks 44 KiB of blocks ran at 0.96-1.41x mpi_best through the slots
/// against pairwise's 0.97-0.99x, 48 KiB at 0.87-0.96x against 0.97-0.98x and 56-60 KiB at
/// 0.80-1.00x against 0.97-1.00x. At three and four ranks on two cores 42-43 KiB ran at 1.9-2.2x
/// mpi_best where pairwise ran 0.9-1.0x, and 58-60 KiB at 0.77-0.79x. Blocks read from the
/// writer's input (eager_store_choice.hpp), as two ranks on cores of their own read any that
/// pass 32 KiB a peer, take no room in the slot and so no part in these limits.
/// At two ranks.
inline constexpr std::size_t kTwoRankBlockBytes = 40 * 1024;
/// Where the ranks outnumber their cores.
inline constexpr std::size_t kSharedCoresBlockBytes = 48 * 1024;

/// The bytes an all_to_allv's table and blocks may take in a slot of `payload_bytes` among
/// `ranks` ranks: the slot's payload, but the table and kTwoRankBlockBytes at two ranks, and the
/// table and kSharedCoresBlockBytes where the ranks outnumber their cores.
std::size_t all_to_allv_capacity(int ranks, bool ranks_share_cores, std::size_t payload_bytes) noexcept;

/// Whether rank `rank`'s table and blocks of `args` fit `capacity` (its own block is not written:
/// it copies that one from its input). Where not, the call is handed over.
bool all_to_allv_fits(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept;

/// The bytes rank `rank`'s `args` puts in its slot: the table, and the blocks where they fit
/// `capacity`.
std::size_t all_to_allv_published_bytes(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept;

/// Writes rank `rank`'s table of `args` and, where they fit `capacity`, its blocks for the
/// peers, into `payload`, the way `way` says (eager_store_choice.hpp): read_from_writer writes
/// the table alone, pointing into the input, at any size. `hand_over`: the rank hands the call
/// over even where its blocks fit, and writes the table alone (but where way is read_from_writer).
void write_all_to_allv(std::byte* payload, const CollectiveArgs& args, int rank, std::size_t capacity,
                       PayloadWay way, bool hand_over = false) noexcept;

/// The bytes rank `rank`'s table and blocks of `args` take in the compact form, where every block
/// it sends a peer and every one it expects back is of at most 255 bytes and they take at most
/// `room` bytes (a slot's inline bytes); else 0. A rank with any compact form writes it
/// (write_compact_all_to_allv()), whatever a forecast says: its blocks always fit.
std::size_t compact_all_to_allv_bytes(const CollectiveArgs& args, int rank, std::size_t room) noexcept;

/// Writes rank `rank`'s table of `args` and its blocks for the peers into `payload` in the compact
/// form: compact_all_to_allv_bytes() must have found it fits.
void write_compact_all_to_allv(std::byte* payload, const CollectiveArgs& args, int rank) noexcept;

/// Whether `payload` holds a compact table, rather than the start of a table past the slot's inline
/// bytes.
bool all_to_allv_compact(const std::byte* payload) noexcept;

/// Whether rank `rank`'s `args`, among two ranks, goes in a short table: its blocks fit
/// `capacity` (all_to_allv_fits()) and what it sends its peer and expects back fit two bytes each.
bool short_all_to_allv_table_fits(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept;

/// Writes rank `rank`'s short table of `args` (8 bytes) at `table`, and its block for its peer
/// `block_at` bytes past it (at most 65535), the way `way` says (plain or streaming stores).
void write_short_all_to_allv(std::byte* table, std::size_t block_at, const CollectiveArgs& args, int rank,
                             PayloadWay way) noexcept;

/// Whether a slot's `inline_bytes` start an all_to_allv's payload: a compact table or a short one.
bool all_to_allv_table_inline(const std::byte* inline_bytes) noexcept;

/// What a slot's inline bytes start with where its all_to_allv's table lies past them: never the
/// first byte of a compact table.
inline constexpr std::byte kAllToAllvPastInline{0xff};

/// Whether `payload`'s writer hands the call over although its blocks fit its slot
/// (write_all_to_allv's `hand_over`).
bool all_to_allv_handed_over_early(const std::byte* payload) noexcept;

/// The size_mismatch of a pair this rank is in whose ranks disagree about a count (the peer's
/// table against this rank's layout, both ways), naming both ranks and both counts; `payloads`
/// holds every rank's payload, in rank order.
std::optional<Error> all_to_allv_mismatch(std::span<const std::byte* const> payloads, const CollectiveArgs& args,
                                          int rank, ErrorContext context);

/// Whether every rank's blocks fit its slot (and are there, or in its input), and no rank hands
/// the call over all the same.
bool all_to_allv_published_everywhere(std::span<const std::byte* const> payloads) noexcept;

/// Whether a rank expects its next all_to_allv to be handed over for want of room in some rank's
/// slot, from the last call it has seen finish: where some rank's blocks overflowed its slot then,
/// and would still, grown or shrunk as this rank's own blocks have since (the ranks' counts of
/// one call tend to move together, as a model's token routing does from step to step). A call
/// handed over on this forecast alone (no rank's blocks overflowed) sets it back, so that the
/// next call tries the slots again: a wrong forecast costs one call's takeover, where the slots
/// would have done, and never loses a call's blocks.
class AllToAllvOverflowForecast {
 public:
  /// `capacity`: what a rank's table and blocks may take of its slot (all_to_allv_capacity()).
  explicit AllToAllvOverflowForecast(std::size_t capacity) noexcept : capacity_(capacity) {}

  /// Whether rank `rank` hands `args` over at once even where its blocks fit its slot.
  [[nodiscard]] bool hands_over(const CollectiveArgs& args, int rank) const noexcept;
  /// Learns from `args`, finished: `payloads` holds every rank's, in rank order.
  void learn(std::span<const std::byte* const> payloads, const CollectiveArgs& args, int rank) noexcept;

 private:
  std::size_t capacity_;
  bool overflowed_ = false;       ///< some rank's blocks did not fit its slot in the last call
  std::size_t sent_then_ = 0;     ///< this rank's block bytes in that call
  std::size_t largest_then_ = 0;  ///< the most block bytes any rank wrote, or would have, in it
};

/// Where the block for rank `reader` lies in rank `writer`'s payload (`payloads` holds every
/// rank's, in rank order), or in the writer's input where the writer left its blocks there.
std::size_t all_to_allv_block_at(std::span<const std::byte* const> payloads, int writer, int reader) noexcept;

}  // namespace meshcomm::detail
