// Streaming copies: every byte lands, whatever the alignment and length, on either side of the
// threshold; from it, the stores are chosen by measuring both kinds.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "streaming_copy.hpp"

namespace meshcomm::detail {
namespace {

std::vector<unsigned char> numbered(std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + 3);
  return data;
}

/// Copies every length and alignment with `width`'s stores and checks each byte, inside and around.
void expect_exact_copies(StoreWidth width) {
  const auto source = numbered(8192 + 256);
  for (std::size_t length : {0, 1, 15, 63, 64, 65, 127, 128, 200, 4096, 4096 + 13, 8192}) {
    for (std::size_t from_offset : {0, 1, 17, 64}) {
      for (std::size_t to_offset : {0, 5, 48, 63}) {
        std::vector<unsigned char> destination(length + 256, 0xEE);
        streaming_copy(destination.data() + to_offset, source.data() + from_offset, length, width);
        for (std::size_t i = 0; i < destination.size(); ++i) {
          const bool inside = i >= to_offset && i < to_offset + length;
          const unsigned char expected = inside ? source[from_offset + i - to_offset] : 0xEE;
          ASSERT_EQ(destination[i], expected) << "length " << length << ", from +" << from_offset << ", to +"
                                              << to_offset << ", byte " << i;
        }
      }
    }
  }
}

TEST(StreamingCopy, CopiesEveryLengthAndAlignmentExactly) { expect_exact_copies(StoreWidth::widest); }

TEST(StreamingCopy, CopiesExactlyWithEachStoreWidth) {
  for (StoreWidth width : {StoreWidth::sse2, StoreWidth::avx2}) {
    if (!has_store_width(width)) continue;
    SCOPED_TRACE(width == StoreWidth::sse2 ? "sse2" : "avx2");
    expect_exact_copies(width);
  }
}

TEST(StreamingCopy, ThresholdIsAtLeastACacheLine) { EXPECT_GE(streaming_copy_threshold(), 64u); }

// A virtual machine may list its host's whole cache as its own CPUs' (480 MiB over two on an
// Intel Xeon VM): a core's share is taken to be at most 32 MiB, unless the threshold is set.
TEST(StreamingCopy, ThresholdIsAtMostThirtyTwoMiBUnlessSet) {
  if (std::getenv("MESHCOMM_STREAMING_COPY_BYTES") != nullptr) GTEST_SKIP() << "the threshold is set";
  EXPECT_LE(streaming_copy_threshold(), std::size_t{32} << 20);
}

TEST(StreamingCopy, CopiesExactlyOnBothSidesOfTheThreshold) {
  const std::size_t threshold = streaming_copy_threshold();
  const auto source = numbered(3 * 4096 + 5);
  for (std::size_t total : {std::size_t{0}, threshold - 1, threshold, threshold * 4}) {
    std::vector<unsigned char> destination(source.size() + 1, 0xEE);
    copy_host_bytes(destination.data() + 1, source.data(), source.size(), total);
    EXPECT_EQ(destination[0], 0xEE) << "total " << total;
    EXPECT_TRUE(std::equal(source.begin(), source.end(), destination.begin() + 1)) << "total " << total;
  }
}

// Below the threshold a reduction's piece takes plain stores, unmeasured; from it, each kind of
// stores does two pieces of a size class first (plain first), then the faster by its figure.
TEST(StreamingCopy, ReductionStoresFromTheThresholdAreMeasuredBothWays) {
  const std::size_t threshold = streaming_copy_threshold();
  std::string taken;
  auto run = [&](std::size_t bytes, std::size_t total, std::chrono::milliseconds plain_takes) {
    with_faster_reduction_stores(
        bytes, total,
        [&] {
          taken += 'p';
          std::this_thread::sleep_for(plain_takes);
        },
        [&] { taken += 's'; });
  };
  run(threshold - 1, threshold - 1, std::chrono::milliseconds(0));
  EXPECT_EQ(taken, "p");
  taken.clear();
  // A size class no other test of this process touches; plain stores take far longer there.
  const std::size_t piece = std::size_t{1} << 41;
  for (int i = 0; i < 5; ++i) run(piece, threshold, std::chrono::milliseconds(5));
  EXPECT_EQ(taken, "ppsss");
}

// One plain piece slowed by other work (a call after a cold start) counts as at most twice plain's
// figure, so it does not turn the choice to streamed sums that measured slower.
TEST(StreamingCopy, OneSlowReductionPieceDoesNotTurnTheStores) {
  const std::size_t threshold = streaming_copy_threshold();
  std::string taken;
  auto run = [&](std::chrono::milliseconds plain_takes, std::chrono::milliseconds streamed_takes) {
    with_faster_reduction_stores(
        std::size_t{1} << 42, threshold,
        [&] {
          taken += 'p';
          std::this_thread::sleep_for(plain_takes);
        },
        [&] {
          taken += 's';
          std::this_thread::sleep_for(streamed_takes);
        });
  };
  using std::chrono::milliseconds;
  for (int i = 0; i < 4; ++i) run(milliseconds(2), milliseconds(20));  // plain twice, then streamed twice
  run(milliseconds(200), milliseconds(20));  // plain, a hundred times its usual time
  run(milliseconds(2), milliseconds(20));
  EXPECT_EQ(taken, "ppsspp");
}

/// Copies `length` bytes eight times with `copy(to, from, length)`, from sources offset by 0-2
/// bytes into a destination offset by 5, and checks that every byte lands and none around it.
void expect_eight_exact_copies(std::size_t length, const std::string& what,
                               const std::function<void(void*, const void*, std::size_t)>& copy) {
  const auto source = numbered(length + 64);
  for (int each = 0; each < 8; ++each) {
    const std::size_t from = static_cast<std::size_t>(each) % 3;
    std::vector<unsigned char> destination(length + 64, 0xEE);
    copy(destination.data() + 5, source.data() + from, length);
    const auto where = fmt::format("{}, length {}, copy {}", what, length, each);
    EXPECT_EQ(destination[4], 0xEE) << where;
    EXPECT_EQ(destination[5 + length], 0xEE) << where;
    EXPECT_TRUE(std::equal(source.begin() + static_cast<std::ptrdiff_t>(from),
                           source.begin() + static_cast<std::ptrdiff_t>(from + length), destination.begin() + 5))
        << where;
  }
}

// Copies into a peer's memory: below kMeasuredPeerWriteBytes plain; from it, each way does two
// copies of a size class first, so that eight copies of a class take both ways; every byte lands,
// for every kind of copy (each with a choice of its own).
TEST(StreamingCopy, CopiesIntoPeerMemoryExactlyEitherWay) {
  for (PeerReadCopy kind : {PeerReadCopy::put, PeerReadCopy::exchange_aside, PeerReadCopy::in_place_result}) {
    for (std::size_t length : {std::size_t{100}, kMeasuredPeerWriteBytes - 1, kMeasuredPeerWriteBytes + 13,
                               3 * kMeasuredPeerWriteBytes + 5}) {
      expect_eight_exact_copies(length, fmt::format("kind {}", static_cast<int>(kind)),
                                [kind](void* to, const void* from, std::size_t bytes) {
                                  copy_into_peer_memory(to, from, bytes, kind);
                                });
    }
  }
}

// Copies into this rank's own result: plain in outputs below kMeasuredResultBytes, measured from
// it (eight copies of a class take both ways, in place and out of place each), streamed from
// the threshold; every byte lands each way.
TEST(StreamingCopy, CopiesIntoOwnResultExactlyEveryWay) {
  const std::size_t threshold = streaming_copy_threshold();
  for (bool in_place : {false, true}) {
    for (std::size_t output_bytes : {kMeasuredResultBytes / 2, kMeasuredResultBytes, threshold}) {
      for (std::size_t length : {std::size_t{100}, kMeasuredPeerWriteBytes + 13, 3 * kMeasuredPeerWriteBytes + 5}) {
        const OwnResult result{.output_bytes = std::max(output_bytes, length), .in_place = in_place};
        expect_eight_exact_copies(length, fmt::format("output {}, in place {}", result.output_bytes, in_place),
                                  [&result](void* to, const void* from, std::size_t bytes) {
                                    copy_into_own_result(to, from, bytes, result);
                                  });
      }
    }
  }
}

}  // namespace
}  // namespace meshcomm::detail
