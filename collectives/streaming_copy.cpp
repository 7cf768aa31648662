#include "streaming_copy.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "environment.hpp"
#include "meshcomm/error.hpp"
#include "plain_copy.hpp"
#include "sse2_line_copy.hpp"

namespace meshcomm::detail {
namespace {

constexpr std::size_t kUnlistedCacheShare = std::size_t{4} << 20;
/// The largest share of a cache one core is taken to reach. A virtual machine may list its
/// host's whole last-level cache as shared by its own few CPUs: a 2-CPU Intel Xeon VM lists 480
/// MiB shared by both, so its copies never streamed, though streaming copies ran 1.18x memcpy's
/// speed at 32 MiB and 1.39x at 64 MiB there, both cores copying, and level at 4-16 MiB
/// (`memory_floor_perf -b 2M -e 64M -f 2`). No CPU gives a core more than about 12 MiB (a 3D
/// V-Cache EPYC: 1152 MiB over 96 cores), so a larger share is such a listing, and is taken to
/// be 32 MiB, where streaming began to pay on that VM.
constexpr std::size_t kLargestCacheShare = std::size_t{32} << 20;

/// How many CPUs a sysfs CPU list such as "0-3,8,10-11" names (an item it cannot read counts
/// as one CPU: the answer only sizes a threshold, and it must not throw).
int cpus_in_list(const std::string& list) {
  int count = 0;
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    int first = 0;
    int last = 0;
    const char* end = item.data() + item.size();
    const auto dash = item.find('-');
    const bool range = dash != std::string::npos &&
                       std::from_chars(item.data(), item.data() + dash, first).ec == std::errc() &&
                       std::from_chars(item.data() + dash + 1, end, last).ec == std::errc() && last >= first;
    count += range ? last - first + 1 : 1;
  }
  return std::max(count, 1);
}

/// The first CPU's share of its largest cache, as the kernel lists it: the cache's size over
/// the CPUs that share it, at most kLargestCacheShare. (sysconf's figure can be the whole
/// package's cache rather than the one a core reaches: 320 MiB against 32 on an EPYC VM.)
std::size_t cache_share_bytes() {
  std::size_t largest_share = 0;
  for (int index = 0;; ++index) {
    const std::string folder = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream size_file(folder + "/size");
    std::ifstream shared_file(folder + "/shared_cpu_list");
    std::size_t size = 0;
    char unit = 0;
    std::string shared;
    if (!(size_file >> size >> unit) || !(shared_file >> shared)) break;
    if (unit == 'K') size <<= 10;
    if (unit == 'M') size <<= 20;
    largest_share = std::max(largest_share, size / static_cast<std::size_t>(cpus_in_list(shared)));
  }
  return largest_share > 0 ? std::min(largest_share, kLargestCacheShare) : kUnlistedCacheShare;
}

}  // namespace

std::size_t streaming_copy_threshold() {
  static const std::size_t threshold = [] {
    const auto setting = environment_variable("MESHCOMM_STREAMING_COPY_BYTES");
    return setting ? parse_byte_count(*setting, "MESHCOMM_STREAMING_COPY_BYTES", {.operation = "create"})
                   : cache_share_bytes();
  }();
  return threshold;
}

#if defined(__x86_64__)
namespace {

constexpr std::size_t kLine = 64;

/// Streams whole lines from `source` to the line-aligned `destination`; returns the bytes done.
std::size_t stream_lines_sse2(std::byte* destination, const std::byte* source, std::size_t bytes) {
  return copy_lines_sse2<LineStores::streaming>(destination, source, bytes);
}

/// The same with 32-byte stores, two per line instead of four: 10-20% faster than SSE2 on the
/// EPYC VM when both of its cores copy at once.
[[gnu::target("avx2")]] std::size_t stream_lines_avx2(std::byte* destination, const std::byte* source,
                                                      std::size_t bytes) {
  std::size_t done = 0;
  for (; done + kLine <= bytes; done += kLine) {
    const auto* in = reinterpret_cast<const __m256i*>(source + done);
    auto* out = reinterpret_cast<__m256i*>(destination + done);
    const __m256i low = _mm256_loadu_si256(in);
    const __m256i high = _mm256_loadu_si256(in + 1);
    _mm256_stream_si256(out, low);
    _mm256_stream_si256(out + 1, high);
  }
  return done;
}

using StreamLines = std::size_t (*)(std::byte*, const std::byte*, std::size_t);

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

StreamLines stream_lines(StoreWidth width) {
  if (width == StoreWidth::widest) width = cpu_has_avx2() ? StoreWidth::avx2 : StoreWidth::sse2;
  return width == StoreWidth::avx2 ? stream_lines_avx2 : stream_lines_sse2;
}

}  // namespace
#endif

bool has_store_width(StoreWidth width) {
#if defined(__x86_64__)
  return width != StoreWidth::avx2 || cpu_has_avx2();
#else
  return width == StoreWidth::widest;
#endif
}

void streaming_copy(void* to, const void* from, std::size_t bytes, StoreWidth width) {
#if defined(__x86_64__)
  auto* destination = static_cast<std::byte*>(to);
  const auto* source = static_cast<const std::byte*>(from);
  // Plain stores up to the destination's first cache line, streaming stores a line at a time,
  // plain stores for what remains.
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(destination) % kLine;
  const std::size_t head = misalignment == 0 ? 0 : kLine - misalignment;
  if (bytes < head + kLine) {
    std::memcpy(destination, source, bytes);
    return;
  }
  std::memcpy(destination, source, head);
  const std::size_t done = head + stream_lines(width)(destination + head, source + head, bytes - head);
  std::memcpy(destination + done, source + done, bytes - done);
  _mm_sfence();
#else
  static_cast<void>(width);
  std::memcpy(to, from, bytes);
#endif
}

bool streaming_stores_are_measured() {
  static const bool measured = [] {
    const auto setting = environment_variable("MESHCOMM_STREAMING_STORES");
    if (!setting || setting->empty() || *setting == "measure") return true;
    if (*setting == "always") return false;
    throw Error(ErrorCode::invalid_argument,
                fmt::format("MESHCOMM_STREAMING_STORES = '{}' is not a choice of stores; valid: measure (the default: "
                            "the shm reductions take the faster of plain and streaming stores, measured, from "
                            "MESHCOMM_STREAMING_COPY_BYTES on, at any size for the all-reduce's shares, for the shm "
                            "all-gathers', all-to-alls' and broadcasts' copies into outputs of 1 MiB up to it, and for "
                            "the payloads of 16-64 KiB of the eager broadcasts, all-gathers and all-to-alls) or always "
                            "(streaming stores from there on, out of place; plain ones below)",
                            *setting),
                {.operation = "create"});
  }();
  return measured;
}

MeasuredChoice* reduction_store_choice() {
  // A call that follows other work can take many times its usual time (16 MiB plain sums after
  // Open MPI's reduce-scatter: 1.2-25 ms against 0.3-0.5 ms), and counted whole one such piece
  // turned the choice to streamed sums (1.5x slower there) for four to six calls. Counted as at
  // most twice the figure, it turns nothing alone: in three alternated pairs of launches of
  // `memory_floor_perf --collective reduce_scatter -b 16M -e 16M` on the AMD EPYC guest the `shm`
  // reduce-scatter out of place ran at 0.84-0.88 of the plain floor, against 0.77-0.84 uncapped.
  static MeasuredChoice choice(MeasuredChoice::Settings{.largest_piece_over_figure = 2.0});
  return streaming_stores_are_measured() ? &choice : nullptr;
}

MeasuredChoice* peer_read_store_choice(bool in_place) {
  // A call that follows other work finds its buffers out of the cache and takes 2-4x as long,
  // whichever the stores: with each piece weighing half, such a piece after a run of plain ones
  // turned the choice to the slower streaming stores for a piece or two (the 2-core VM, 10 calls
  // a round between other work). A quarter keeps one such piece from it; a real change of speeds,
  // which lasts seconds there, still turns the choice within four pieces.
  constexpr double kLatestPieceWeight = 0.25;
  static std::array<MeasuredChoice, 2> choices{MeasuredChoice(kLatestPieceWeight),
                                               MeasuredChoice(kLatestPieceWeight)};  // out of place, in place
  return streaming_stores_are_measured() ? &choices[in_place ? 1 : 0] : nullptr;
}

namespace {

/// Copies `bytes` with the stores `choice` finds faster for their size class, each copy timed
/// for it; a trial of the other stores copies an eighth of the bytes that way and the rest the
/// usual way.
void copy_with_measured_stores(MeasuredChoice& choice, void* to, const void* from, std::size_t bytes) {
  const int way = choice.choose(bytes);
  const int usual = choice.usual_way(bytes);
  auto* target = static_cast<std::byte*>(to);
  const auto* source = static_cast<const std::byte*>(from);
  auto copy = [&](int stores, std::size_t at, std::size_t count) {
    const auto began = std::chrono::steady_clock::now();
    if (stores == 1) {
      streaming_copy(target + at, source + at, count);
    } else {
      plain_copy(target + at, source + at, count);
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - began).count();
  };
  auto record = [&](int stores, double nanoseconds, std::size_t count) {
    const double whole = nanoseconds * static_cast<double>(bytes) / static_cast<double>(count);
    choice.record(bytes, stores, std::chrono::nanoseconds(static_cast<std::int64_t>(whole)));
  };
  if (way == usual) {
    record(way, copy(way, 0, bytes), bytes);
    return;
  }
  // A trial of the whole copy cost 3x a copy in a fast period on the 2-core VM, and the halo
  // exchange of 2 MiB ran 13% slower over the 60 exchanges of a launch, where the two ways'
  // speeds per byte do not depend on the part's size.
  const std::size_t part = std::min(bytes, std::max(kMeasuredPeerWriteBytes / 2, bytes / 8 / 64 * 64));
  record(way, copy(way, 0, part), part);
  if (part < bytes) record(usual, copy(usual, part, bytes - part), bytes - part);
}

}  // namespace

void copy_into_peer_memory(void* to, const void* from, std::size_t bytes, PeerReadCopy kind) {
  if (bytes < kMeasuredPeerWriteBytes) {
    plain_copy(to, from, bytes);
    return;
  }
  if (!streaming_stores_are_measured()) {
    copy_host_bytes(to, from, bytes, bytes);
    return;
  }
  // A quarter per piece: one copy slowed by something else (a page fault, a context switch)
  // moves the figure little, while the slow periods last seconds.
  static std::array<MeasuredChoice, kPeerReadCopyKinds> choices{MeasuredChoice(0.25), MeasuredChoice(0.25),
                                                                MeasuredChoice(0.25)};
  static_assert(static_cast<std::size_t>(PeerReadCopy::in_place_result) + 1 == kPeerReadCopyKinds);
  copy_with_measured_stores(choices[static_cast<std::size_t>(kind)], to, from, bytes);
}

void copy_into_own_result(void* to, const void* from, std::size_t bytes, const OwnResult& result) {
  if (result.output_bytes >= streaming_copy_threshold()) {
    streaming_copy(to, from, bytes);
  } else if (result.output_bytes < kMeasuredResultBytes || bytes < kMeasuredPeerWriteBytes ||
             !streaming_stores_are_measured()) {
    plain_copy(to, from, bytes);
  } else {
    // Weighed as the copies into peers' memory; in place and out of place apart.
    static std::array<MeasuredChoice, 2> choices{MeasuredChoice(0.25), MeasuredChoice(0.25)};
    copy_with_measured_stores(choices[result.in_place ? 1 : 0], to, from, bytes);
  }
}

void copy_host_bytes(void* to, const void* from, std::size_t bytes, std::size_t total_bytes) {
  if (total_bytes >= streaming_copy_threshold()) {
    streaming_copy(to, from, bytes);
  } else {
    plain_copy(to, from, bytes);
  }
}

}  // namespace meshcomm::detail
