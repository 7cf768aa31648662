#pragma once

// Host copies too large to stay in the cache, written with non-temporal stores: a plain copy
// first reads every destination line for ownership and then writes it back (three memory
// transfers per line), a streaming copy only reads the source and writes the destination (two).
// On this kind of machine that is 1.5-1.8x the bandwidth of memcpy for copies far beyond the
// last-level cache, and a loss for copies that fit in it, whose reader would find them cached.

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "measured_choice.hpp"

namespace meshcomm::detail {

/// The size from which a copy should stream: MESHCOMM_STREAMING_COPY_BYTES if set (a byte count
/// such as 65536 or 4M), else one CPU's share of the largest cache it reaches (the cache's size
/// over the CPUs sharing it, as the kernel lists them; 4 MiB where it lists none). Read once; a
/// malformed setting throws Error(invalid_argument) naming it, at each call until it is fixed
/// (CollectiveEngine::from_environment calls this first, as a communicator is created).
std::size_t streaming_copy_threshold();

/// The stores a streaming copy uses: the widest this CPU has, or one width named (for tests).
enum class StoreWidth { widest, sse2, avx2 };

/// Whether this CPU can make streaming copies with `width` (always, for `widest`).
bool has_store_width(StoreWidth width);

/// Copies `bytes` host bytes from `from` to `to` (not overlapping) with non-temporal stores where
/// the machine has them (x86-64; `width` must be one has_store_width() accepts); elsewhere with
/// memcpy. The stores are fenced before it returns, so the copy is visible to other cores like
/// memcpy's.
void streaming_copy(void* to, const void* from, std::size_t bytes, StoreWidth width = StoreWidth::widest);

/// Whether MESHCOMM_STREAMING_STORES asks for measured stores: "measure" (or unset) yes,
/// "always" no (streaming stores from streaming_copy_threshold() on, out of place, plain ones
/// below it and in place; the eager slots' payloads plain). Read
/// once; any other value throws Error(invalid_argument) naming it, at each call until it is fixed.
bool streaming_stores_are_measured();

/// The measured choice of stores for reductions too large for the cache (MeasuredChoice, way 0
/// plain, way 1 streamed); null where MESHCOMM_STREAMING_STORES=always (they stream from the
/// threshold, unmeasured). A single piece counts as at most twice its way's figure, so that one
/// call slowed by other work cannot turn the choice alone. The variable is read once: "measure"
/// (or unset) or "always"; any other value throws Error(invalid_argument) naming it, at each call
/// until it is fixed.
MeasuredChoice* reduction_store_choice();

/// The measured choice of stores for results that peers read straight after (the shm
/// all-reduce's shares: each rank sums its share, then copies the others' from their owners).
/// Way 0 plain, way 1 streamed, timed over the writing and the reading both, on the rank that
/// chooses for all. The reading is what differs: on the 2-core VM of perftests/HISTORY.md a core
/// read lines the other had just written at cache speed in some periods and at about 1.7 GB/s in
/// others, when it read them from memory 3x faster, so at 1-4 MiB plain stores ran the all-reduce
/// 2x faster in the first kind of period and streaming stores 3x faster in the second. Calls in
/// place and out of place are measured apart: in place a call's time also holds the reading of
/// its input, which is the output its peers wrote last, and the two kinds' figures must not mix.
/// Null where MESHCOMM_STREAMING_STORES=always (as reduction_store_choice()).
MeasuredChoice* peer_read_store_choice(bool in_place);

/// The copies into memory another process reads next, each kind with a measured choice of its
/// own: their speeds differ (what the reader does with the lines, how soon it reads them).
enum class PeerReadCopy : std::uint8_t {
  put,              ///< the ucx backend's puts into a same-host peer's segment
  exchange_aside,   ///< a block copied aside for an exchange in place to send from
  in_place_result,  ///< an in-place result written over lines the peers have just read
};

/// How many kinds PeerReadCopy has: one measured choice each.
inline constexpr std::size_t kPeerReadCopyKinds = 3;

/// Copies `bytes` into memory that another process reads next (`kind`): from
/// kMeasuredPeerWriteBytes with the stores that copied that size class faster, each copy timed for
/// the choice (MeasuredChoice, way 0 plain, way 1 streamed; a trial of the other stores copies an
/// eighth of the bytes that way and the rest the usual way); plain below it. The copy's own time
/// tells the ways apart: on the 2-core VM of perftests/HISTORY.md a 2 MiB halo put took 60-120 us
/// with plain stores and 150-200 streamed in some launches, while in others (a core's stores to
/// lines the other core read a few calls before slow down many times) plain ones made the exchange
/// 3-5x slower than streamed ones. copy_host_bytes()'s rule where MESHCOMM_STREAMING_STORES=always.
void copy_into_peer_memory(void* to, const void* from, std::size_t bytes, PeerReadCopy kind);

/// The smallest copy into a peer's memory whose stores are measured.
inline constexpr std::size_t kMeasuredPeerWriteBytes = std::size_t{64} << 10;

/// The smallest output whose copies into it copy_into_own_result() measures: below it plain
/// stores, whose lines the reader then finds in the cache, ran the shm all-gather of shared
/// buffers at 256 KiB-1 MiB 1.2-1.9x faster than streaming ones on the Intel Xeon guest of
/// perftests/README.md ("Against the memory floor"), where streaming first paid at 4 MiB.
inline constexpr std::size_t kMeasuredResultBytes = std::size_t{1} << 20;

/// The output a copy_into_own_result() copy writes into.
struct OwnResult {
  std::size_t output_bytes = 0;  ///< the whole output of the operation the copy is part of
  bool in_place = false;         ///< whether the operation runs in place (its stores are measured apart)
};

/// Copies `bytes` of a result that this rank alone reads next (the shm all-gather's, broadcast's
/// and all-to-all's copies from the peers' memory) into `result`'s output: streamed from
/// streaming_copy_threshold() of the output on, plain below kMeasuredResultBytes (or below
/// kMeasuredPeerWriteBytes a copy), and in between with the stores that copied that size class
/// faster, measured as copy_into_peer_memory() measures its (a choice each for in place and out of
/// place: in place a rank writes less of its output). The cache a VM lists says little about
/// where streaming begins to pay: a 2-CPU Intel Xeon guest that lists 300 MiB of L3 (2 MiB of L2
/// a core) put the threshold at 32 MiB, where its shm all-gather of shared buffers ran 1.1-1.4x
/// faster streamed at 4-16 MiB. Where MESHCOMM_STREAMING_STORES=always, copy_host_bytes()'s rule.
void copy_into_own_result(void* to, const void* from, std::size_t bytes, const OwnResult& result);

/// Does a piece of a reduction that writes `bytes`, in an operation that writes `total_bytes` in
/// all on this rank, with plain stores (`plain()`) or streaming ones (`streamed()`, summing a
/// cached chunk at a time): plain below streaming_copy_threshold(), where the output may stay in
/// the cache for its reader; from it, whichever measured faster for pieces of that size class.
/// Which is faster there changes with the machine's state: on the 2-core VM of
/// perftests/HISTORY.md the shm reduce-scatter at 64 MiB ran 0.97x the memory floor streamed in
/// one launch and 0.72x in the next two, where plain stores had become 1.5x faster. Copies
/// (copy_host_bytes) stream from the threshold unmeasured: there streaming stores were the faster
/// on every day measured, and a copy's plain stores leave dirty lines whose write-back a later
/// piece pays, which timing the copy alone misses.
template <class Plain, class Streamed>
void with_faster_reduction_stores(std::size_t bytes, std::size_t total_bytes, Plain&& plain, Streamed&& streamed) {
  if (total_bytes < streaming_copy_threshold()) return plain();
  MeasuredChoice* choice = reduction_store_choice();
  if (choice == nullptr) return streamed();
  const bool stream = choice->choose(bytes) == 1;
  const auto began = std::chrono::steady_clock::now();
  if (stream) {
    streamed();
  } else {
    plain();
  }
  choice->record(bytes, stream ? 1 : 0, std::chrono::steady_clock::now() - began);
}

/// streaming_copy() when `total_bytes` — everything this rank writes in the operation that this
/// copy is part of — reaches streaming_copy_threshold(); memcpy otherwise.
void copy_host_bytes(void* to, const void* from, std::size_t bytes, std::size_t total_bytes);

}  // namespace meshcomm::detail
