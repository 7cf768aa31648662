#pragma once

// The few PMIx client calls meshcomm makes: a session, publishing a key, and reading one key
// from many ranks at once with a timeout (PMIx's direct modex: a get waits until the owner
// commits the key, so a key that never comes names a rank that never arrived).

#include <pmix.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshcomm::detail {

/// A PMIx client session: while it lives PMIx stays initialised (MPI may hold another reference
/// under a PMIx launcher); without a server, `ok()` is false and nothing else may be called.
class PmixSession {
 public:
  PmixSession() { ok_ = PMIx_Init(&self_, nullptr, 0) == PMIX_SUCCESS; }
  ~PmixSession() {
    if (ok_) PMIx_Finalize(nullptr, 0);
  }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  /// This process: its namespace (the job) and rank.
  [[nodiscard]] const pmix_proc_t& self() const noexcept { return self_; }

 private:
  pmix_proc_t self_{};
  bool ok_ = false;
};

/// Puts `value` under `key` for every process of the job and commits it; false if PMIx refused.
bool pmix_publish(const std::string& key, std::span<const std::byte> value);

/// Reads `key` from each of `ranks` (ranks of this process's namespace) concurrently, asking
/// again for those not found yet until `wait` has passed. One entry per rank: the value, or
/// nothing where the rank never published it in time. Returns nothing at all if PMIx did not
/// answer a get within its own timeout (a little more).
std::optional<std::vector<std::optional<std::vector<std::byte>>>> pmix_fetch(const PmixSession& session,
                                                                             const std::string& key,
                                                                             std::span<const int> ranks,
                                                                             std::chrono::milliseconds wait);

}  // namespace meshcomm::detail
