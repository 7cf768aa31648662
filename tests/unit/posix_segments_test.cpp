// POSIX shared-memory segments: names that a dead process with this process's id left behind,
// or a forked child's, never stop an allocation, a peer that opens a name reads what the owner
// wrote, and prefaulting a peer's segment maps every page asked for.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "shared_memory/page_prefault.hpp"
#include "shared_memory/shared_segment.hpp"

namespace meshcomm::detail {
namespace {

TEST(PosixSegments, NamesLeftByAnEarlierProcessWithThisIdDoNotStopAnAllocation) {
  // The names a process with this id made before the token: what one killed before it freed
  // its segments leaves in /dev/shm.
  std::vector<std::string> leftovers;
  for (int counter = 0; counter < 4; ++counter) {
    leftovers.push_back(fmt::format("/meshcomm-{}-{}", getpid(), counter));
    const int fd = shm_open(leftovers.back().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << leftovers.back();
    close(fd);
  }
  auto segments = make_posix_segments();
  std::vector<SegmentProvider::Allocation> made;
  for (int i = 0; i < 3; ++i) {
    made.push_back(segments->allocate(4096));
    for (const auto& leftover : leftovers) EXPECT_NE(made.back().handle, leftover);
    std::memset(made.back().base, 0x40 + i, 4096);
  }
  EXPECT_NE(made[0].handle, made[1].handle);
  EXPECT_NE(made[1].handle, made[2].handle);
  // A peer (here another provider of this process) maps a segment by its name.
  auto peer = make_posix_segments();
  for (int i = 0; i < 3; ++i) {
    const std::byte* seen = peer->attach(made[static_cast<std::size_t>(i)].handle);
    EXPECT_EQ(static_cast<int>(seen[0]), 0x40 + i);
    EXPECT_EQ(static_cast<int>(seen[4095]), 0x40 + i);
  }
  peer.reset();
  for (auto& allocation : made) allocation.release();
  for (const auto& leftover : leftovers) shm_unlink(leftover.c_str());
}

TEST(PosixSegments, AForkedChildNamesItsSegmentsApartFromItsParent) {
  auto segments = make_posix_segments();
  auto mine = segments->allocate(4096);
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's first name after the fork: the parent's counter and token, its own id.
    close(pipe_ends[0]);
    int status = 1;
    try {
      auto theirs = make_posix_segments()->allocate(4096);
      const std::string handle = theirs.handle;
      theirs.release();
      status = write(pipe_ends[1], handle.data(), handle.size()) == static_cast<ssize_t>(handle.size()) ? 0 : 2;
    } catch (...) {
      status = 3;
    }
    _exit(status);
  }
  close(pipe_ends[1]);
  char buffer[SegmentProvider::kMaxHandle] = {};
  const ssize_t got = read(pipe_ends[0], buffer, sizeof buffer);
  close(pipe_ends[0]);
  int status = -1;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not allocate a segment";
  ASSERT_GT(got, 0);
  const std::string childs(buffer, static_cast<std::size_t>(got));
  EXPECT_NE(childs, mine.handle);
  // The parent's next name is not the child's either.
  auto next = segments->allocate(4096);
  EXPECT_NE(next.handle, childs);
  next.release();
  mine.release();
}

/// Whether the page holding `address` is in this process's page tables (/proc/self/pagemap's
/// "present" bit, readable without privileges); nullopt where the file cannot be read.
std::optional<bool> page_present(const std::byte* address) {
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return std::nullopt;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::uint64_t entry = 0;
  const auto at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(address) / page * sizeof entry);
  const bool read_it = pread(fd, &entry, sizeof entry, at) == static_cast<ssize_t>(sizeof entry);
  close(fd);
  if (!read_it) return std::nullopt;
  return (entry >> 63U) != 0;
}

TEST(PosixSegments, PrefaultingAPeersSegmentMapsEveryPageOfTheRange) {
  // 64 pages: more than the kernel maps around one faulting load (fault_around_bytes, 64 KiB).
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kPages = 64;
  auto owner = make_posix_segments();
  auto made = owner->allocate(kPages * page);
  std::memset(made.base, 0x5a, kPages * page);  // the owner writes it, as an eager segment's owner does
  {
    // From within the first page to the segment's very end, where its mapping ends: a load past
    // the range would fault.
    auto peer = make_posix_segments();
    const std::byte* seen = peer->attach(made.handle);
    const auto before = page_present(seen + (kPages - 1) * page);
    if (!before) GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
    EXPECT_FALSE(*before) << "a fresh mapping should have no page in the page tables yet";
    prefault_for_reading(seen + 100, kPages * page - 100);
    for (std::size_t index = 0; index < kPages; ++index) EXPECT_TRUE(*page_present(seen + index * page)) << index;
  }
  {
    // Two bytes across a page boundary: both pages.
    auto peer = make_posix_segments();
    const std::byte* seen = peer->attach(made.handle);
    prefault_for_reading(seen + 40 * page - 1, 2);
    EXPECT_TRUE(*page_present(seen + 39 * page));
    EXPECT_TRUE(*page_present(seen + 40 * page));
  }
  made.release();
}

}  // namespace
}  // namespace meshcomm::detail
