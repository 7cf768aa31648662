#include "meshcomm/pmix_bootstrap.hpp"

#include <fmt/format.h>

#include <atomic>

#include "../environment.hpp"
#include "arrivals.hpp"
#include "meshcomm/config.hpp"
#include "meshcomm/error.hpp"

#if MESHCOMM_HAVE_PMIX
#include "pmix_client.hpp"
#endif

namespace meshcomm {

namespace {

ErrorContext pmix_context(const char* operation, int rank = -1) {
  return {.backend = "pmix", .operation = operation, .rank = rank};
}

}  // namespace

#if MESHCOMM_HAVE_PMIX

/// The PMIx session and the key prefix of this bootstrap's exchanges.
class PmixBootstrap::Session {
 public:
  detail::PmixSession pmix;
  /// Unique per bootstrap made in this process (every rank makes them in the same order), so
  /// a later bootstrap never reads an earlier one's keys.
  std::string prefix;
};

PmixBootstrap::PmixBootstrap(std::chrono::milliseconds timeout)
    : session_(std::make_unique<Session>()), timeout_(detail::resolve_timeout(timeout)) {
  if (!session_->pmix.ok()) {
    throw Error(ErrorCode::backend_failure,
                "PmixBootstrap: no PMIx server started this process (PMIx_Init failed); start it with a PMIx "
                "launcher: mpirun (Open MPI), srun --mpi=pmix (Slurm) or prterun",
                pmix_context("PmixBootstrap"));
  }
  rank_ = static_cast<int>(session_->pmix.self().rank);
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, session_->pmix.self().nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* value = nullptr;
  const pmix_status_t status = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32) {
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    throw Error(ErrorCode::backend_failure,
                fmt::format("PmixBootstrap: the PMIx server did not say the job's size (PMIx_Get(PMIX_JOB_SIZE): {})",
                            PMIx_Error_string(status)),
                pmix_context("PmixBootstrap", rank_));
  }
  size_ = static_cast<int>(value->data.uint32);
  PMIX_VALUE_RELEASE(value);
  static std::atomic<std::uint64_t> made{0};
  session_->prefix = fmt::format("meshcomm.bootstrap.{}", made++);
}

PmixBootstrap::~PmixBootstrap() = default;

std::string PmixBootstrap::description() const {
  return fmt::format("pmix: rank {} of {} in PMIx namespace '{}'", rank_, size_, session_->pmix.self().nspace);
}

std::vector<std::byte> PmixBootstrap::all_gather(std::span<const std::byte> mine) {
  const std::string key = fmt::format("{}.{}", session_->prefix, round_++);
  if (!detail::pmix_publish(key, mine)) {
    throw Error(ErrorCode::backend_failure, fmt::format("PmixBootstrap: PMIx_Put/PMIx_Commit of '{}' failed", key),
                pmix_context("bootstrap all_gather", rank_));
  }
  std::vector<int> others;
  for (int other = 0; other < size_; ++other) {
    if (other != rank_) others.push_back(other);
  }
  const auto values = detail::pmix_fetch(session_->pmix, key, others, timeout_);
  std::vector<int> missing;
  if (values) {
    for (std::size_t index = 0; index < others.size(); ++index) {
      if (!(*values)[index]) missing.push_back(others[index]);
    }
  }
  if (!values || !missing.empty()) {
    throw detail::arrival_timeout("pmix", "all_gather", rank_, timeout_,
                                  values ? std::optional(missing) : std::nullopt);
  }
  std::vector<std::byte> gathered;
  gathered.reserve(mine.size() * static_cast<std::size_t>(size_));
  for (int other = 0; other < size_; ++other) {
    if (other == rank_) {
      gathered.insert(gathered.end(), mine.begin(), mine.end());
      continue;
    }
    const auto& theirs = *(*values)[static_cast<std::size_t>(other < rank_ ? other : other - 1)];
    if (theirs.size() != mine.size()) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("bootstrap all_gather: rank {} gave {} bytes but rank {} gave {}; every rank must give "
                              "the same number",
                              rank_, mine.size(), other, theirs.size()),
                  {.backend = "pmix", .operation = "bootstrap all_gather", .rank = rank_, .peer = other});
    }
    gathered.insert(gathered.end(), theirs.begin(), theirs.end());
  }
  return gathered;
}

void PmixBootstrap::barrier() {
  const std::byte here{1};
  (void)all_gather(std::span(&here, 1));
}

#else

class PmixBootstrap::Session {};

PmixBootstrap::PmixBootstrap(std::chrono::milliseconds timeout) : timeout_(timeout) {
  throw Error(ErrorCode::unsupported,
              "PmixBootstrap: this build of meshcomm has no PMIx (configure where libpmix-dev is found, "
              "MESHCOMM_WITH_PMIX=ON)",
              pmix_context("PmixBootstrap"));
}
PmixBootstrap::~PmixBootstrap() = default;
std::string PmixBootstrap::description() const { return "pmix"; }
std::vector<std::byte> PmixBootstrap::all_gather(std::span<const std::byte> /*mine*/) { return {}; }
void PmixBootstrap::barrier() {}

#endif

}  // namespace meshcomm
