// Copies out of step within a page: every byte lands, by plain_copy() and by the kernel copies
// between processes on each of their routes, at every offset that picks a different path.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plain_copy.hpp"
#include "process_memory.hpp"

namespace meshcomm::detail {
namespace {

std::vector<unsigned char> numbered(std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + i / 251 + 3);
  return data;
}

/// Checks that `destination` holds `source`'s bytes from `from_offset` at [to_offset,
/// to_offset + length) and 0xEE everywhere else.
void expect_copied(const std::vector<unsigned char>& destination, const std::vector<unsigned char>& source,
                   std::size_t to_offset, std::size_t from_offset, std::size_t length, const char* how) {
  for (std::size_t i = 0; i < destination.size(); ++i) {
    const bool inside = i >= to_offset && i < to_offset + length;
    const unsigned char expected = inside ? source[from_offset + i - to_offset] : 0xEE;
    ASSERT_EQ(destination[i], expected) << how << ": length " << length << ", from +" << from_offset << ", to +"
                                        << to_offset << ", byte " << i;
  }
}

TEST(PlainCopy, OutOfStepIsOneToSixtyThreeBytesAheadWithinAPage) {
  const std::uintptr_t source = 0x10000;
  for (std::uintptr_t ahead : {1, 16, 31, 63}) {
    EXPECT_TRUE(out_of_step(source + ahead, source)) << ahead;
    EXPECT_TRUE(out_of_step(source + 3 * kCopyPageBytes + ahead, source)) << ahead;
    EXPECT_TRUE(out_of_step(source + ahead + 100, source + 100)) << ahead;
  }
  for (std::uintptr_t ahead : {0, 64, 2048, 4032, 4095}) {
    EXPECT_FALSE(out_of_step(source + ahead, source)) << ahead;
    EXPECT_FALSE(out_of_step(source + 5 * kCopyPageBytes + ahead, source)) << ahead;
  }
  EXPECT_FALSE(out_of_step(source, source + 16));  // 16 bytes behind: 4080 ahead
}

TEST(PlainCopy, EveryByteLandsAtEveryOffsetAndLength) {
  const std::size_t page = kCopyPageBytes;
  const auto source = numbered(3 * page + 64 * 1024);
  for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, kOutOfStepCopyFrom - 1,
                             kOutOfStepCopyFrom, kOutOfStepCopyFrom + 13, std::size_t{64 * 1024 + 61}}) {
    for (std::size_t from_offset : {std::size_t{0}, std::size_t{17}, page - 8}) {
      for (std::size_t ahead : {0, 1, 16, 31, 32, 63, 64, 4000}) {
        std::vector<unsigned char> destination(length + 2 * page, 0xEE);
        // `to` ahead of `from` by `ahead` within a page, whatever the vectors' own offsets.
        const auto page_of_destination = reinterpret_cast<std::uintptr_t>(destination.data()) % page;
        const auto wanted = (reinterpret_cast<std::uintptr_t>(source.data()) + from_offset + ahead) % page;
        const std::size_t to_offset = (wanted + page - page_of_destination) % page;
        plain_copy(destination.data() + to_offset, source.data() + from_offset, length);
        expect_copied(destination, source, to_offset, from_offset, length, "plain_copy");
      }
    }
  }
}

TEST(ProcessMemory, KernelCopiesOutOfStepLandEveryByteOnEveryRoute) {
  allow_peers_to_read_this_process();
  const std::int64_t self = getpid();
  const std::size_t page = kCopyPageBytes;
  // Past the bounce buffer's 256 KiB, so that a copy through it takes several pieces.
  const std::size_t length = 300 * 1024 + 13;
  const auto source = numbered(length + 2 * page);
  for (const auto route : {OutOfStepRoute::measured, OutOfStepRoute::direct, OutOfStepRoute::through_bounce}) {
    for (std::size_t ahead : {0, 16, 40, 2048}) {
      std::vector<unsigned char> destination(length + 2 * page, 0xEE);
      const auto page_of_destination = reinterpret_cast<std::uintptr_t>(destination.data()) % page;
      const auto wanted = (reinterpret_cast<std::uintptr_t>(source.data()) + ahead) % page;
      const std::size_t to_offset = (wanted + page - page_of_destination) % page;
      ASSERT_EQ(read_from_process(self, reinterpret_cast<std::uint64_t>(source.data()),
                                  destination.data() + to_offset, length, route),
                0);
      expect_copied(destination, source, to_offset, 0, length, "read_from_process");

      std::vector<unsigned char> target(length + 2 * page, 0xEE);
      const auto page_of_target = reinterpret_cast<std::uintptr_t>(target.data()) % page;
      const std::size_t at = (wanted + page - page_of_target) % page;
      ASSERT_EQ(write_to_process(self, reinterpret_cast<std::uint64_t>(target.data() + at), source.data(), length,
                                 route),
                0);
      expect_copied(target, source, at, 0, length, "write_to_process");
    }
  }
}

TEST(ProcessMemory, AFailedKernelCopyThroughTheBounceBufferReturnsItsErrno) {
  std::vector<unsigned char> destination(64 * 1024, 0);
  // Not a mapped address in this process: the copy fails as the direct one would.
  const std::uint64_t unmapped = 8;
  EXPECT_NE(read_from_process(getpid(), unmapped, destination.data() + 16, destination.size() - 16,
                              OutOfStepRoute::through_bounce),
            0);
  EXPECT_NE(write_to_process(getpid(), unmapped + 16, destination.data(), destination.size() - 16,
                             OutOfStepRoute::through_bounce),
            0);
}

}  // namespace
}  // namespace meshcomm::detail
