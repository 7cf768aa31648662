#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// How often a wait looks whether the processes it waits on have ended.
inline constexpr std::chrono::milliseconds kLivenessInterval{100};

/// Who a rank is as an operating-system process, exchanged when a communicator is made, so that
/// a wait can tell a peer that has exited from one that is only slow. Plain data: it travels as
/// bytes.
struct ProcessIdentity {
  std::uint64_t host = 0;           ///< hash of the kernel's boot id: equal on one host, one boot
  std::uint64_t pid_namespace = 0;  ///< inode of the pid namespace: pids compare only within one
  std::uint64_t start_time = 0;     ///< start time in clock ticks since boot: tells a reused pid
  std::int64_t pid = 0;

  /// This process.
  static ProcessIdentity of_this_process();
};

/// The rest of the open /proc file `fd`, read with read(2); nullopt where a read fails, as one of
/// /proc/<pid>/stat does (ESRCH) once its process has ended after the open. Never throws: a
/// std::ifstream's streambuf iterator threw that failure as std::ios_base::failure, out of a
/// wait that was looking whether its peer had ended.
std::optional<std::string> read_open_proc_file(int fd);

/// Whether the process `peer` names has certainly ended (exited, killed, a zombie, or its pid
/// reused). Only a process on this host, in this pid namespace, can be seen: for any other the
/// answer is false (not known to have ended). Reads /proc; never blocks on the peer.
bool has_ended(const ProcessIdentity& peer);

/// The processes of a communicator's ranks, in rank order, and which of them are seen to have
/// ended.
class RankProcesses {
 public:
  RankProcesses() = default;
  explicit RankProcesses(std::vector<ProcessIdentity> ranks) : ranks_(std::move(ranks)) {}

  /// The ranks among `candidates` whose processes have ended (empty: none seen; ranks on other
  /// hosts are never seen).
  [[nodiscard]] std::vector<int> ended(std::span<const int> candidates) const;
  /// The ranks other than `self` whose processes have ended.
  [[nodiscard]] std::vector<int> ended_except(int self) const;
  /// "rank 3 (pid 1234 on this host)" for the error message of an ended rank.
  [[nodiscard]] std::string describe(int rank) const;
  /// Rank `rank`'s process.
  [[nodiscard]] const ProcessIdentity& operator[](int rank) const { return ranks_[static_cast<std::size_t>(rank)]; }
  /// Error(peer_failure) naming the ended `ranks` (the first becomes the context's peer) and
  /// `consequence`: "rank 1 (pid 1234 on this host) has ended, so <consequence>".
  [[nodiscard]] Error failure(std::span<const int> ranks, ErrorContext context, std::string_view consequence) const;

 private:
  std::vector<ProcessIdentity> ranks_;
};

/// When an operation polled incomplete should look at its peers' processes: the clock is read
/// every 1024 polls, and the processes looked at every kLivenessInterval from the first reading,
/// so an operation that completes soon never reads the clock.
class LivenessSchedule {
 public:
  /// Call on every incomplete poll; true when it is time to look.
  bool due() noexcept {
    if ((++polls_ & 1023U) != 0) return false;
    const auto now = std::chrono::steady_clock::now();
    if (looked_ == std::chrono::steady_clock::time_point{}) looked_ = now;
    if (now - looked_ < kLivenessInterval) return false;
    looked_ = now;
    return true;
  }

 private:
  unsigned polls_ = 0;
  std::chrono::steady_clock::time_point looked_{};
};

}  // namespace meshcomm::detail
