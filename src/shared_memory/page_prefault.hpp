#pragma once

#include <cstddef>

namespace meshcomm::detail {

/// Maps every page of [base, base + bytes) into this process's page tables now, by one load from
/// each, so that no later load from it takes a page fault. For memory that exists already, such
/// as a peer's shared segment once the peer has written it. (madvise(MADV_POPULATE_READ) on a
/// peer's eager segment left the first calls as slow as no prefault at all: at two ranks on the
/// AMD EPYC guest, 2026-12-03, `alltoallv_perf -b 6K -e 6K -n 10 -w 2`, three alternated
/// launches each, the first block of ten calls took 14-47 us a call with it and 1.4-5.5 with
/// the loads.)
void prefault_for_reading(const std::byte* base, std::size_t bytes) noexcept;

}  // namespace meshcomm::detail
