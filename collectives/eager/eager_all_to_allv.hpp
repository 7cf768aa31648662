#pragma once

// An all_to_allv in the eager slots (eager_mailbox.hpp). Each rank's payload starts with a table,
// one entry per rank: where the block it sends that rank lies in the payload, how many bytes it
// sends and how many it expects back. The blocks follow, its own left out (it copies that one
// from its input), where they all fit the slot; a flag before the table says whether they did.
// The counts differ by rank, so whether they fit is only known once every rank's table is read:
// then every rank takes its blocks from the slots, or, where some rank's did not fit, every rank
// alike hands the call over (EagerMailbox::take_handed_over). The tables also let both ranks of a
// pair that disagree about a count fail, naming each other, before any block is read.

#include <cstddef>
#include <optional>
#include <span>

#include "collective_args.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// Whether this rank's table and blocks of `args` fit `capacity` (its own block counted too,
/// though it is not written: a bound that needs no rank). Where not, the call is handed over.
bool all_to_allv_fits(const CollectiveArgs& args, std::size_t capacity) noexcept;

/// The bytes `args` puts in its slot: the table, and the blocks where they fit `capacity`.
std::size_t all_to_allv_published_bytes(const CollectiveArgs& args, std::size_t capacity) noexcept;

/// Writes rank `rank`'s table of `args` and, where they fit `capacity`, its blocks for the
/// peers, into `payload`.
void write_all_to_allv(std::byte* payload, const CollectiveArgs& args, int rank, std::size_t capacity) noexcept;

/// The size_mismatch of a pair this rank is in whose ranks disagree about a count (the peer's
/// table against this rank's layout, both ways), naming both ranks and both counts; `payloads`
/// holds every rank's payload, in rank order.
std::optional<Error> all_to_allv_mismatch(std::span<const std::byte* const> payloads, const CollectiveArgs& args,
                                          int rank, ErrorContext context);

/// Whether every rank's blocks are in its slot.
bool all_to_allv_published_everywhere(std::span<const std::byte* const> payloads) noexcept;

/// Copies this rank's blocks from the peers' payloads (and its own from its input) into the
/// output, where all_to_allv_published_everywhere().
void read_all_to_allv(std::span<const std::byte* const> payloads, const CollectiveArgs& args, int rank) noexcept;

}  // namespace meshcomm::detail
