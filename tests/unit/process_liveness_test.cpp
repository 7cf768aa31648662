// Telling an ended peer process from a slow one: /proc read without exceptions, even where the
// process ends between the file's opening and its reading.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <sstream>
#include <string>

#include "process_liveness.hpp"

namespace meshcomm::detail {
namespace {

/// A child process that waits to be killed; its pid.
pid_t start_sleeping_child() {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  return child;
}

TEST(ProcessLiveness, ThisProcessIsKnownAndRunning) {
  const auto self = ProcessIdentity::of_this_process();
  EXPECT_EQ(self.pid, static_cast<std::int64_t>(::getpid()));
  EXPECT_NE(self.start_time, 0U);
  EXPECT_FALSE(has_ended(self));
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const auto text = read_open_proc_file(fd);
  ::close(fd);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find(std::to_string(::getpid()) + " ("), std::string::npos) << *text;
}

TEST(ProcessLiveness, AProcessEndingBetweenOpenAndReadIsAnEndNotAnException) {
  const pid_t child = start_sleeping_child();
  ASSERT_GT(child, 0);
  const int fd = ::open(("/proc/" + std::to_string(child) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  std::optional<std::string> text;
  EXPECT_NO_THROW(text = read_open_proc_file(fd));
  ::close(fd);
  EXPECT_FALSE(text.has_value()) << "read " << text.value_or("");
}

TEST(ProcessLiveness, AKilledPeerHasEnded) {
  const pid_t child = start_sleeping_child();
  ASSERT_GT(child, 0);
  ProcessIdentity peer = ProcessIdentity::of_this_process();
  peer.pid = child;
  // The child's start time, as its identity would carry it: field 22 of its stat line.
  const int fd = ::open(("/proc/" + std::to_string(child) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const auto text = read_open_proc_file(fd);
  ::close(fd);
  ASSERT_TRUE(text.has_value());
  std::istringstream fields(text->substr(text->rfind(')') + 1));
  std::string skipped;
  for (int field = 3; field < 22; ++field) fields >> skipped;
  fields >> peer.start_time;
  ASSERT_NE(peer.start_time, 0U);
  EXPECT_FALSE(has_ended(peer)) << "a sleeping child is running";
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(has_ended(peer));
}

}  // namespace
}  // namespace meshcomm::detail
