#include "eager_all_to_allv.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "streaming_copy.hpp"

namespace meshcomm::detail {

namespace {

// The names here are all_to_allv's own: unity builds join this file with the other eager ones.

/// One table entry: what a rank sends the entry's rank, and what it expects back, in bytes.
struct TableEntry {
  std::uint64_t offset = 0;  ///< of the block in the payload
  std::uint64_t sent = 0;
  std::uint64_t expected = 0;
};

/// The flag that starts a payload, the first byte of the word before the table: where the writer's
/// blocks are, and in which form.
constexpr std::size_t kBlocksFollowFlagBytes = sizeof(std::uint64_t);
constexpr std::uint8_t kBlocksOverflowed = 0;  ///< nowhere: they did not fit the slot
constexpr std::uint8_t kBlocksFollow = 1;      ///< after the table
constexpr std::uint8_t kBlocksInInput = 2;     ///< in the writer's input
constexpr std::uint8_t kBlocksHandedOver = 3;  ///< nowhere: they fit, but the writer hands the call over
/// A compact table (the flag byte, then a byte of what it sends and one of what it expects per
/// peer, in rank order, the writer left out), its blocks after it.
constexpr std::uint8_t kCompactBlocksFollow = 4;
/// A two-rank table in a word (the flag byte, what the writer sends its peer and what it expects
/// back, then how far past the table its block starts, in two bytes each), its block further on.
constexpr std::uint8_t kShortTableBlockFollows = 5;
static_assert(std::to_integer<std::uint8_t>(kAllToAllvPastInline) != kCompactBlocksFollow &&
              std::to_integer<std::uint8_t>(kAllToAllvPastInline) != kShortTableBlockFollows);
constexpr std::size_t kShortTableMost = 0xffff;  ///< the most bytes a short table's count holds
constexpr std::size_t kCompactEntryBytes = 2;
constexpr std::size_t kCompactMost = 0xff;  ///< the most bytes a compact entry's count holds

std::uint8_t blocks_flag(const std::byte* payload) noexcept { return std::to_integer<std::uint8_t>(payload[0]); }

std::size_t compact_table_bytes(std::size_t ranks) noexcept { return 1 + (ranks - 1) * kCompactEntryBytes; }

std::size_t all_to_allv_table_bytes(std::size_t ranks) noexcept {
  return kBlocksFollowFlagBytes + ranks * sizeof(TableEntry);
}

/// The bytes of the blocks `rank` writes into its slot: all it sends but its own block.
std::size_t all_to_allv_sent_bytes(const CollectiveArgs& args, int rank) noexcept {
  std::size_t elements = 0;
  for (auto count : args.layout.send_counts) elements += count;
  return (elements - args.layout.send_counts[static_cast<std::size_t>(rank)]) * size_of(args.input.type);
}

/// The entry for `reader` in the table `writer` wrote at `payload`, in either form, among `ranks`.
TableEntry table_entry(const std::byte* payload, std::size_t ranks, std::size_t writer, std::size_t reader) noexcept {
  TableEntry read;
  if (blocks_flag(payload) == kShortTableBlockFollows) {
    std::uint16_t sent = 0;
    std::uint16_t expected = 0;
    std::memcpy(&sent, payload + 1, sizeof sent);
    std::memcpy(&expected, payload + 1 + sizeof sent, sizeof expected);
    read.sent = sent;
    read.expected = expected;
    std::uint16_t block_at = 0;
    std::memcpy(&block_at, payload + 1 + sizeof sent + sizeof expected, sizeof block_at);
    read.offset = block_at;
    return read;
  }
  if (blocks_flag(payload) != kCompactBlocksFollow) {
    std::memcpy(&read, payload + kBlocksFollowFlagBytes + reader * sizeof(TableEntry), sizeof read);
    return read;
  }
  // The compact table gives no places: the blocks follow it in rank order, the writer's own left
  // out, and so do the entries, so the reader's block follows those of the entries before its own.
  const std::size_t entry = reader - (writer < reader ? 1 : 0);
  read.offset = compact_table_bytes(ranks);
  for (std::size_t before = 0; before < entry; ++before) {
    read.offset += std::to_integer<std::size_t>(payload[1 + before * kCompactEntryBytes]);
  }
  read.sent = std::to_integer<std::size_t>(payload[1 + entry * kCompactEntryBytes]);
  read.expected = std::to_integer<std::size_t>(payload[2 + entry * kCompactEntryBytes]);
  return read;
}

}  // namespace

std::size_t all_to_allv_capacity(int ranks, bool ranks_share_cores, std::size_t payload_bytes) noexcept {
  const std::size_t table = all_to_allv_table_bytes(static_cast<std::size_t>(ranks));
  if (ranks == 2) return std::min(payload_bytes, table + kTwoRankBlockBytes);
  if (ranks_share_cores) return std::min(payload_bytes, table + kSharedCoresBlockBytes);
  return payload_bytes;
}

bool all_to_allv_fits(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept {
  return all_to_allv_table_bytes(args.layout.send_counts.size()) + all_to_allv_sent_bytes(args, rank) <= capacity;
}

std::size_t all_to_allv_published_bytes(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept {
  const std::size_t blocks = all_to_allv_fits(args, rank, capacity) ? all_to_allv_sent_bytes(args, rank) : 0;
  return all_to_allv_table_bytes(args.layout.send_counts.size()) + blocks;
}

void write_all_to_allv(std::byte* payload, const CollectiveArgs& args, int rank, std::size_t capacity,
                       PayloadWay way, bool hand_over) noexcept {
  const auto& layout = args.layout;
  const std::size_t ranks = layout.send_counts.size();
  const std::size_t element = size_of(args.input.type);
  const bool in_input = way == PayloadWay::read_from_writer;
  std::uint8_t blocks_are = kBlocksFollow;
  if (in_input) {
    blocks_are = kBlocksInInput;
  } else if (!all_to_allv_fits(args, rank, capacity)) {
    blocks_are = kBlocksOverflowed;
  } else if (hand_over) {
    blocks_are = kBlocksHandedOver;
  }
  payload[0] = std::byte{blocks_are};
  const auto* input = static_cast<const std::byte*>(args.input.data);
  std::size_t at = all_to_allv_table_bytes(ranks);
  for (std::size_t peer = 0; peer < ranks; ++peer) {
    const std::size_t in_input_at = layout.send_offsets[peer] * element;
    const TableEntry written{.offset = in_input ? in_input_at : at, .sent = layout.send_counts[peer] * element,
                             .expected = layout.recv_counts[peer] * element};
    std::memcpy(payload + kBlocksFollowFlagBytes + peer * sizeof(TableEntry), &written, sizeof written);
    if (blocks_are != kBlocksFollow || peer == static_cast<std::size_t>(rank) || written.sent == 0) continue;
    const std::byte* block = input + in_input_at;
    if (way == PayloadWay::streaming_stores) {
      streaming_copy(payload + at, block, written.sent);
    } else {
      std::memcpy(payload + at, block, written.sent);
    }
    at += written.sent;
  }
}

std::size_t compact_all_to_allv_bytes(const CollectiveArgs& args, int rank, std::size_t room) noexcept {
  const auto& layout = args.layout;
  const std::size_t ranks = layout.send_counts.size();
  const std::size_t element = size_of(args.input.type);
  if (ranks < 2) return 0;
  for (std::size_t peer = 0; peer < ranks; ++peer) {
    if (peer == static_cast<std::size_t>(rank)) continue;
    if (layout.send_counts[peer] * element > kCompactMost || layout.recv_counts[peer] * element > kCompactMost) {
      return 0;
    }
  }
  const std::size_t bytes = compact_table_bytes(ranks) + all_to_allv_sent_bytes(args, rank);
  return bytes <= room ? bytes : 0;
}

void write_compact_all_to_allv(std::byte* payload, const CollectiveArgs& args, int rank) noexcept {
  const auto& layout = args.layout;
  const std::size_t ranks = layout.send_counts.size();
  const std::size_t element = size_of(args.input.type);
  const auto* input = static_cast<const std::byte*>(args.input.data);
  payload[0] = std::byte{kCompactBlocksFollow};
  std::byte* entry = payload + 1;
  std::byte* block = payload + compact_table_bytes(ranks);
  for (std::size_t peer = 0; peer < ranks; ++peer) {
    if (peer == static_cast<std::size_t>(rank)) continue;
    const std::size_t sent = layout.send_counts[peer] * element;
    entry[0] = static_cast<std::byte>(sent);
    entry[1] = static_cast<std::byte>(layout.recv_counts[peer] * element);
    entry += kCompactEntryBytes;
    if (sent == 0) continue;
    std::memcpy(block, input + layout.send_offsets[peer] * element, sent);
    block += sent;
  }
}

bool short_all_to_allv_table_fits(const CollectiveArgs& args, int rank, std::size_t capacity) noexcept {
  const auto& layout = args.layout;
  if (layout.send_counts.size() != 2 || !all_to_allv_fits(args, rank, capacity)) return false;
  const auto peer = static_cast<std::size_t>(1 - rank);
  const std::size_t element = size_of(args.input.type);
  return layout.send_counts[peer] * element <= kShortTableMost && layout.recv_counts[peer] * element <= kShortTableMost;
}

void write_short_all_to_allv(std::byte* table, std::size_t block_at, const CollectiveArgs& args, int rank,
                             PayloadWay way) noexcept {
  const auto& layout = args.layout;
  const auto peer = static_cast<std::size_t>(1 - rank);
  const std::size_t element = size_of(args.input.type);
  const auto sent = static_cast<std::uint16_t>(layout.send_counts[peer] * element);
  const auto expected = static_cast<std::uint16_t>(layout.recv_counts[peer] * element);
  table[0] = std::byte{kShortTableBlockFollows};
  std::memcpy(table + 1, &sent, sizeof sent);
  std::memcpy(table + 1 + sizeof sent, &expected, sizeof expected);
  const auto block_offset = static_cast<std::uint16_t>(block_at);
  std::memcpy(table + 1 + sizeof sent + sizeof expected, &block_offset, sizeof block_offset);
  if (sent == 0) return;
  const std::byte* block = static_cast<const std::byte*>(args.input.data) + layout.send_offsets[peer] * element;
  if (way == PayloadWay::streaming_stores) {
    streaming_copy(table + block_at, block, sent);
  } else {
    std::memcpy(table + block_at, block, sent);
  }
}

std::optional<Error> all_to_allv_mismatch(std::span<const std::byte* const> payloads, const CollectiveArgs& args,
                                          int rank, ErrorContext context) {
  const auto& layout = args.layout;
  const std::size_t element = size_of(args.input.type);
  const auto self = static_cast<std::size_t>(rank);
  for (std::size_t peer = 0; peer < payloads.size(); ++peer) {
    if (peer == self) continue;
    const std::size_t sends = layout.send_counts[peer] * element;
    const std::size_t expects = layout.recv_counts[peer] * element;
    const TableEntry theirs = table_entry(payloads[peer], payloads.size(), peer, self);
    if (theirs.sent == expects && theirs.expected == sends) continue;
    context.peer = static_cast<int>(peer);
    return Error(ErrorCode::size_mismatch,
                 fmt::format("ranks {} and {} disagree about all_to_allv's counts between them: rank {} sends {} "
                             "bytes to rank {}, which expects {}; rank {} sends {} bytes to rank {}, which expects {} "
                             "(layout.send_counts on one side must equal layout.recv_counts on the other)",
                             rank, peer, peer, theirs.sent, rank, expects, rank, sends, peer, theirs.expected),
                 std::move(context));
  }
  return std::nullopt;
}

bool all_to_allv_handed_over_early(const std::byte* payload) noexcept {
  return blocks_flag(payload) == kBlocksHandedOver;
}

bool all_to_allv_published_everywhere(std::span<const std::byte* const> payloads) noexcept {
  return std::all_of(payloads.begin(), payloads.end(), [](const std::byte* payload) {
    const std::uint8_t flag = blocks_flag(payload);
    return flag == kBlocksFollow || flag == kBlocksInInput || flag == kCompactBlocksFollow ||
           flag == kShortTableBlockFollows;
  });
}

bool AllToAllvOverflowForecast::hands_over(const CollectiveArgs& args, int rank) const noexcept {
  if (!overflowed_ || sent_then_ == 0) return false;
  const double scaled = static_cast<double>(largest_then_) * static_cast<double>(all_to_allv_sent_bytes(args, rank)) /
                        static_cast<double>(sent_then_);
  return static_cast<double>(all_to_allv_table_bytes(args.layout.send_counts.size())) + scaled >
         static_cast<double>(capacity_);
}

void AllToAllvOverflowForecast::learn(std::span<const std::byte* const> payloads, const CollectiveArgs& args,
                                      int rank) noexcept {
  overflowed_ = std::any_of(payloads.begin(), payloads.end(),
                            [](const std::byte* payload) { return blocks_flag(payload) == kBlocksOverflowed; });
  if (!overflowed_) return;  // the common case, on every call: nothing more to read
  largest_then_ = 0;
  for (std::size_t writer = 0; writer < payloads.size(); ++writer) {
    std::size_t blocks = 0;
    for (std::size_t peer = 0; peer < payloads.size(); ++peer) {
      if (peer != writer) blocks += table_entry(payloads[writer], payloads.size(), writer, peer).sent;
    }
    largest_then_ = std::max(largest_then_, blocks);
  }
  sent_then_ = all_to_allv_sent_bytes(args, rank);
}

bool all_to_allv_compact(const std::byte* payload) noexcept { return blocks_flag(payload) == kCompactBlocksFollow; }

bool all_to_allv_table_inline(const std::byte* inline_bytes) noexcept {
  const std::uint8_t flag = blocks_flag(inline_bytes);
  return flag == kCompactBlocksFollow || flag == kShortTableBlockFollows;
}

std::size_t all_to_allv_block_at(std::span<const std::byte* const> payloads, int writer, int reader) noexcept {
  const auto from = static_cast<std::size_t>(writer);
  return table_entry(payloads[from], payloads.size(), from, static_cast<std::size_t>(reader)).offset;
}

}  // namespace meshcomm::detail
