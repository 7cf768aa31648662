#include "mpi_arrivals.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#if MESHCOMM_HAVE_PMIX
#include <pmix.h>
#endif

namespace meshcomm::detail {

namespace {

/// How many creations this process has entered on each group of world ranks.
std::uint64_t next_creation_on(const std::vector<int>& world_ranks) {
  static std::mutex mutex;
  static std::map<std::vector<int>, std::uint64_t> creations;
  std::lock_guard lock(mutex);
  return creations[world_ranks]++;
}

#if MESHCOMM_HAVE_PMIX
/// A PMIx client session for one step: MPI already holds one under a PMIx launcher, so this only
/// counts a reference; without a server, init fails and nothing is done.
class PmixSession {
 public:
  PmixSession() { ok_ = PMIx_Init(&self_, nullptr, 0) == PMIX_SUCCESS; }
  ~PmixSession() {
    if (ok_) PMIx_Finalize(nullptr, 0);
  }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] const pmix_proc_t& self() const noexcept { return self_; }

 private:
  pmix_proc_t self_{};
  bool ok_ = false;
};

struct Answers;

/// Which get a callback answers.
struct AnswerSlot {
  Answers* answers = nullptr;
  std::size_t index = 0;
};

/// The answers to non-blocking gets, counted as they come.
struct Answers {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<bool> found;
  std::vector<AnswerSlot> slots;
  int pending = 0;
};

void on_answer(pmix_status_t status, pmix_value_t* /*value*/, void* context) {
  auto* slot = static_cast<AnswerSlot*>(context);
  {
    std::lock_guard lock(slot->answers->mutex);
    slot->answers->found[slot->index] = status == PMIX_SUCCESS;
    --slot->answers->pending;
  }
  slot->answers->changed.notify_all();
}
#endif

}  // namespace

MpiArrivals::MpiArrivals(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank_);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) ranks[static_cast<std::size_t>(rank)] = rank;
  world_ranks_.resize(ranks.size());
  MPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks_.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  const auto group_hash = std::hash<std::string>{}(fmt::format("{}", fmt::join(world_ranks_, ",")));
  key_ = fmt::format("meshcomm.arrived.{:x}.{}", group_hash, next_creation_on(world_ranks_));
}

void MpiArrivals::announce() const {
#if MESHCOMM_HAVE_PMIX
  PmixSession session;
  if (!session.ok()) return;
  pmix_value_t value;
  const std::uint32_t here = 1;
  PMIX_VALUE_LOAD(&value, &here, PMIX_UINT32);
  if (PMIx_Put(PMIX_GLOBAL, key_.c_str(), &value) == PMIX_SUCCESS) PMIx_Commit();
  PMIX_VALUE_DESTRUCT(&value);
#endif
}

std::optional<std::vector<int>> MpiArrivals::missing(std::chrono::milliseconds wait) const {
#if MESHCOMM_HAVE_PMIX
  PmixSession session;
  if (!session.ok()) return std::nullopt;
  const auto ranks = world_ranks_.size();
  // Held by the callbacks until they have all run; left behind if PMIx never answers one.
  auto answers = std::make_unique<Answers>();
  answers->found.assign(ranks, false);
  answers->slots.resize(ranks);
  const int seconds = static_cast<int>(std::max<std::int64_t>(1, (wait.count() + 999) / 1000));
  pmix_info_t info;
  PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
  for (std::size_t index = 0; index < ranks; ++index) {
    answers->found[index] = static_cast<int>(index) == rank_;
    if (static_cast<int>(index) == rank_ || world_ranks_[index] == MPI_UNDEFINED) continue;
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, session.self().nspace, static_cast<pmix_rank_t>(world_ranks_[index]));
    answers->slots[index] = {answers.get(), index};
    {
      std::lock_guard lock(answers->mutex);
      ++answers->pending;
    }
    if (PMIx_Get_nb(&peer, key_.c_str(), &info, 1, on_answer, &answers->slots[index]) != PMIX_SUCCESS) {
      std::lock_guard lock(answers->mutex);
      --answers->pending;
    }
  }
  bool all_answered = false;
  {
    std::unique_lock lock(answers->mutex);
    // PMIx answers every get by its own timeout; a little more guards against one that does not.
    all_answered = answers->changed.wait_for(lock, std::chrono::seconds(seconds + 2),
                                             [&] { return answers->pending == 0; });
  }
  PMIX_INFO_DESTRUCT(&info);
  if (!all_answered) {
    (void)answers.release();  // a late callback may still write it
    return std::nullopt;
  }
  std::vector<int> absent;
  for (std::size_t index = 0; index < ranks; ++index) {
    if (!answers->found[index]) absent.push_back(static_cast<int>(index));
  }
  return absent;
#else
  (void)wait;
  return std::nullopt;
#endif
}

std::string describe_arrivals(const std::optional<std::vector<int>>& missing) {
  if (!missing) return "some rank of the communicator has not joined it";
  if (missing->empty()) {
    return "every rank arrived, but not within one timeout of the others: some gave up before the last came";
  }
  return fmt::format("{} {} never arrived at this step", missing->size() == 1 ? "rank" : "ranks",
                     fmt::join(*missing, ", "));
}

}  // namespace meshcomm::detail
