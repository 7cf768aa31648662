// POSIX shared-memory segments: shm_open'ed under a name made of the process id, a token the
// process draws once and a counter, and mapped read-only by the peers that open that name.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "meshcomm/error.hpp"
#include "shared_segment.hpp"

namespace meshcomm::detail {

namespace {

Error system_error(const std::string& call, const std::string& name) {
  return Error(ErrorCode::backend_failure,
               fmt::format("{} for shared memory segment {} failed: {}; check that /dev/shm is mounted and has room",
                           call, name, std::strerror(errno)),
               {.operation = "allocate_shared", .native_code = errno});
}

/// Drawn once per process. The process id alone repeats: a process killed before it freed its
/// segments leaves their names in /dev/shm, and a later process given the same id then found
/// its first names taken (shm_open: File exists, allocate_shared failed); containers that share
/// /dev/shm but not their process ids (a Kubernetes pod's) repeat ids outright. A forked child
/// keeps the token but not the id.
std::uint64_t process_token() {
  static const std::uint64_t token = [] {
    try {
      std::random_device device;
      return (std::uint64_t{device()} << 32) | device();
    } catch (const std::exception&) {
      return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
  }();
  return token;
}

/// Names tried before allocate gives up: a name is taken only by a segment left behind by a
/// process with this id and token, which the token makes unlikely enough that a few suffice.
constexpr int kNameTries = 8;

class PosixSegments final : public SegmentProvider {
 public:
  ~PosixSegments() override {
    for (auto& [name, mapping] : peers_) munmap(mapping.first, mapping.second);
  }

  Allocation allocate(std::size_t bytes) override {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t size = std::max(page, (bytes + page - 1) / page * page);
    // Numbered per process, never per provider: a provider made where an older one was freed
    // must not reuse the name of a segment that is still alive or still mapped by a peer.
    static std::atomic<std::uint64_t> created{0};
    std::string name;
    int fd = -1;
    for (int tries = 0; fd < 0; ++tries) {
      name = fmt::format("/meshcomm-{}-{:016x}-{}", getpid(), process_token(), created.fetch_add(1));
      fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
      if (fd < 0 && (errno != EEXIST || tries + 1 == kNameTries)) throw system_error("shm_open", name);
    }
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      const auto error = system_error("ftruncate", name);
      close(fd);
      shm_unlink(name.c_str());
      throw error;
    }
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
      const auto error = system_error("mmap", name);
      shm_unlink(name.c_str());
      throw error;
    }
    return {.base = static_cast<std::byte*>(base),
            .bytes = size,
            .handle = name,
            .release =
                [base, size, name] {
                  munmap(base, size);
                  shm_unlink(name.c_str());  // ENOENT once unpublished: nothing to do
                },
            .unpublish = [name] { shm_unlink(name.c_str()); }};
  }

  std::byte* attach(const std::string& name) override {
    std::lock_guard lock(mutex_);
    if (auto found = peers_.find(name); found != peers_.end()) return found->second.first;
    const int fd = shm_open(name.c_str(), O_RDONLY, 0);
    if (fd < 0) throw system_error("shm_open", name);
    struct stat info {};
    fstat(fd, &info);
    const auto size = static_cast<std::size_t>(info.st_size);
    void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) throw system_error("mmap", name);
    peers_[name] = {static_cast<std::byte*>(base), size};
    return static_cast<std::byte*>(base);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::pair<std::byte*, std::size_t>> peers_;  // name -> base, bytes
};

}  // namespace

std::shared_ptr<SegmentProvider> make_posix_segments() { return std::make_shared<PosixSegments>(); }

}  // namespace meshcomm::detail
