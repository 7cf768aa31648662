#pragma once

// The eager path of small collectives (shared slots), beyond the collective matrix: ranks that run
// ahead of each other by more operations than there are slots, and a rank left waiting alone.

#include <cstddef>

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// The eager slots each rank owns (EagerMailbox::kSlots, which unit_eager_slots_test holds this to):
/// the cases run more calls than there are slots, so that slots are reused.
inline constexpr int kEagerSlots = 16;
/// Operations apart at which a slot's header is reused (EagerMailbox::kHeaders, held alike).
inline constexpr int kEagerHeaders = 128;
/// The bytes of a header's share of its slot's payload bytes (EagerMailbox::kPayloadShareBytes).
inline constexpr std::size_t kEagerPayloadShareBytes = 8 * 1024;

/// Every rank starts three times as many small collectives as there are headers without waiting
/// (one rank late), every fifth one's payload too large for its header but not for its share of
/// the slot's payload bytes, every seventh one's too large for that share, then waits for them
/// newest first: every result is exact.
void check_eager_calls_run_ahead(Communicator& world);

/// Broadcasts through the eager slots in the size classes whose stores are measured (16, 32 and
/// 64 KiB), many calls each from the first and the last rank on a communicator of their own, so
/// that the stores change way at least once in each (plain for the first measured calls, then
/// streaming ones for a trial, EagerStoreChoice): every result is exact, whatever the way.
void check_eager_broadcasts_store_both_ways(Communicator& world);

/// Broadcasts larger than a slot, which pass through the slots in pieces of a slot's payload
/// (EagerMailbox::start_in_pieces): sizes that end in a whole piece, in one element (inline in its
/// slot) and in an odd number of bytes, of several types, from the first and the last rank, each
/// started before any is waited for between small all-reduces, one rank late (more pieces in
/// flight than slots): every result is exact. Then readers that disagree with the root about the
/// count fail at the first piece naming both calls (the root, which waits for no reader,
/// completes), and a root left alone times out naming a rank that never arrived.
void check_eager_broadcasts_in_pieces(Communicator& world);

/// All-reduces larger than a slot, which pass through the slots in pieces of a slot's payload,
/// each reduced whole by every rank (EagerMailbox::start_in_pieces): sizes that end in a whole
/// piece, in one element and in an odd number of bytes, of several types and every reduction, out
/// of place and in place, all started before any is waited for, one rank late (more pieces in
/// flight than slots), and waited for newest first: every result is exact. Then a rank that
/// disagrees with its peers about the count fails at the first piece naming both calls, as do they,
/// and a rank left alone times out naming a rank that never arrived.
void check_eager_all_reduces_in_pieces(Communicator& world);

/// Broadcasts in pieces whose buffers come from allocate_shared on some ranks and are plain on
/// others, call by call: a root whose buffer is shared leaves its pieces there and its readers
/// copy the whole of it at the first piece, through their mappings (EagerMailbox::finish). Sizes
/// that end in a whole piece and in an odd number of bytes, more pieces than slots, from the first
/// and the last rank, each started before any is waited for between small all-reduces, one rank
/// late: every result is exact, and every root's buffer is unchanged.
void check_eager_broadcasts_of_shared_buffers(Communicator& world);

/// Broadcasts through the eager slots of data the root's slot may already hold (a root leaves
/// out of its stores the leading blocks its slot holds): sizes below a compared block, of one and
/// of four slots' payloads, and in pieces, from the first and the last rank, each sent unchanged
/// more times than there are slots, then with one element changed at its end, in a middle block
/// and at its start, then as it first was, after an all-reduce whose payload takes a slot and
/// after a barrier; the readers' buffers hold other values before each call. Every result is
/// exact.
void check_eager_broadcasts_of_data_at_rest(Communicator& world);

/// All-gathers, all-to-alls and all-to-allvs through the eager slots in the size classes whose
/// stores are measured (16, 32 and 64 KiB published per rank; the all-to-all's where its blocks
/// are 16 KiB or more, the all-to-allv's where the block to the next rank is), and one below them
/// for the all-to-all, out of place and in place (the all-to-allv out of place), many calls each on a
/// communicator of their own, so that every rank's stores change way at least once where the ranks
/// do not outnumber their cores (each rank's decided by the rank after it, EagerStoreChoice):
/// every result is exact, whatever the way.
void check_eager_copies_store_both_ways(Communicator& world);

/// all_to_allv through the eager slots, one rank late so that the calls outlast their layouts'
/// arrays (gone before the waits): rounds whose blocks all fit the slots, and two in which rank
/// 0's do not, so that every rank hands the call over alike (the second, and the fitting one
/// after it, where the ranks expect it, at once), all started before any is waited for, then
/// each waited for before the next starts; every result exact. Then a pair that disagrees about
/// a count: both of its ranks fail with size_mismatch naming each other, and any other rank
/// completes.
void check_eager_all_to_allv(Communicator& world);

/// All-to-alls in place on the eager path where its payloads are read from the writers' buffers
/// (MESHCOMM_EAGER_PEER_READS=always, or 32 KiB blocks and more on ranks with cores of their own):
/// each pair of ranks swaps its two blocks between their buffers, each rank one half
/// (EagerMailbox::swap_half_with). Blocks of one element, of an odd number of floats, of 32 KiB
/// and of one more than a swap's bounce buffer holds (its last chunk a float), each size called
/// three times with new data and once more with the result of the call before as its input:
/// every result is exact. Sizes the path declines where peers do not read payloads (the ranks
/// outnumber their cores) are left out, alike on every rank.
void check_eager_all_to_alls_in_place(Communicator& world);

/// Barriers on the eager slots: no rank leaves one before the last has entered it (each rank's
/// entry and exit on the host's monotonic clock, compared after), with each rank late in turn; a
/// barrier against a collective fails on both sides naming both calls; a barrier alone times
/// out naming a rank that never arrived; the world stays usable.
void check_eager_barrier(Communicator& world);

/// One rank calls a small collective that the others never make: its wait times out naming a
/// rank that never arrived; the world stays usable.
void check_eager_timeout_names_a_missing_rank(Communicator& world);

}  // namespace meshcomm::testing
