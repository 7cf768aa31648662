#include "process_liveness.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshcomm::detail {

namespace {

/// The fields of /proc/<pid>/stat that matter here.
struct ProcessStat {
  char state = '?';
  std::uint64_t start_time = 0;
};

/// Reads /proc/<pid>/stat; false if there is no such process, or if it ended while being read.
bool read_stat(std::int64_t pid, ProcessStat& stat) {
  const int fd = ::open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto read = read_open_proc_file(fd);
  ::close(fd);
  if (!read) return false;
  const std::string& text = *read;
  // The command name (field 2) is in parentheses and may hold spaces: fields resume after the
  // last ')'. Field 3 is the state, field 22 the start time.
  const auto name_end = text.rfind(')');
  if (name_end == std::string::npos) return false;
  std::istringstream fields(text.substr(name_end + 1));
  fields >> stat.state;
  std::string skipped;
  for (int field = 4; field < 22; ++field) fields >> skipped;
  fields >> stat.start_time;
  return !fields.fail();
}

std::uint64_t boot_id_hash() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(file, id);
  return id.empty() ? 0 : std::hash<std::string>{}(id);
}

std::uint64_t pid_namespace_inode() {
  struct stat info {};
  return ::stat("/proc/self/ns/pid", &info) == 0 ? static_cast<std::uint64_t>(info.st_ino) : 0;
}

}  // namespace

std::optional<std::string> read_open_proc_file(int fd) {
  std::string text;
  std::array<char, 512> chunk{};
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got > 0) {
      text.append(chunk.data(), static_cast<std::size_t>(got));
    } else if (got == 0) {
      return text;
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
}

ProcessIdentity ProcessIdentity::of_this_process() {
  static const ProcessIdentity self = [] {
    ProcessIdentity identity;
    identity.host = boot_id_hash();
    identity.pid_namespace = pid_namespace_inode();
    identity.pid = static_cast<std::int64_t>(::getpid());
    ProcessStat stat;
    if (read_stat(identity.pid, stat)) identity.start_time = stat.start_time;
    return identity;
  }();
  return self;
}

bool has_ended(const ProcessIdentity& peer) {
  const auto& self = ProcessIdentity::of_this_process();
  // Unknown identities (no /proc) and processes elsewhere are never judged.
  if (peer.host == 0 || peer.pid_namespace == 0 || peer.start_time == 0) return false;
  if (peer.host != self.host || peer.pid_namespace != self.pid_namespace) return false;
  ProcessStat stat;
  if (!read_stat(peer.pid, stat)) return true;
  return stat.start_time != peer.start_time || stat.state == 'Z' || stat.state == 'X';
}

std::vector<int> RankProcesses::ended(std::span<const int> candidates) const {
  std::vector<int> ranks;
  for (int rank : candidates) {
    if (rank >= 0 && static_cast<std::size_t>(rank) < ranks_.size() && has_ended(ranks_[static_cast<std::size_t>(rank)])) {
      ranks.push_back(rank);
    }
  }
  return ranks;
}

std::vector<int> RankProcesses::ended_except(int self) const {
  std::vector<int> candidates;
  for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) {
    if (rank != self) candidates.push_back(rank);
  }
  return ended(candidates);
}

std::string RankProcesses::describe(int rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks_.size()) return fmt::format("rank {}", rank);
  return fmt::format("rank {} (pid {} on this host)", rank, ranks_[static_cast<std::size_t>(rank)].pid);
}

Error RankProcesses::failure(std::span<const int> ranks, ErrorContext context, std::string_view consequence) const {
  std::vector<std::string> names;
  for (int rank : ranks) names.push_back(describe(rank));
  if (!ranks.empty()) context.peer = ranks.front();
  return Error(ErrorCode::peer_failure,
               fmt::format("{} {} ended, so {}", fmt::join(names, ", "), ranks.size() == 1 ? "has" : "have", consequence),
               std::move(context));
}

}  // namespace meshcomm::detail
