#include "pmix_client.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

namespace meshcomm::detail {

namespace {

/// The answers of one fetch, counted as they come; shared with the callbacks, which may outlive
/// the fetch if PMIx answers late.
struct Answers {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::optional<std::vector<std::byte>>> values;
  int pending = 0;
};

/// What one callback needs: which answer it fills.
struct AnswerSlot {
  std::shared_ptr<Answers> answers;
  std::size_t index = 0;
};

std::optional<std::vector<std::byte>> copy_value(const pmix_value_t* value) {
  if (value == nullptr) return std::vector<std::byte>{};
  if (value->type != PMIX_BYTE_OBJECT) return std::vector<std::byte>{};
  const auto* bytes = reinterpret_cast<const std::byte*>(value->data.bo.bytes);
  return std::vector<std::byte>(bytes, bytes + value->data.bo.size);
}

void on_answer(pmix_status_t status, pmix_value_t* value, void* context) {
  std::unique_ptr<AnswerSlot> slot(static_cast<AnswerSlot*>(context));
  {
    std::lock_guard lock(slot->answers->mutex);
    if (status == PMIX_SUCCESS) slot->answers->values[slot->index] = copy_value(value);
    --slot->answers->pending;
  }
  slot->answers->changed.notify_all();
}

}  // namespace

bool pmix_publish(const std::string& key, std::span<const std::byte> value) {
  pmix_value_t loaded;
  pmix_byte_object_t object{const_cast<char*>(reinterpret_cast<const char*>(value.data())), value.size()};
  PMIX_VALUE_LOAD(&loaded, &object, PMIX_BYTE_OBJECT);
  const bool put = PMIx_Put(PMIX_GLOBAL, key.c_str(), &loaded) == PMIX_SUCCESS;
  PMIX_VALUE_DESTRUCT(&loaded);
  return put && PMIx_Commit() == PMIX_SUCCESS;
}

std::optional<std::vector<std::optional<std::vector<std::byte>>>> pmix_fetch(const PmixSession& session,
                                                                             const std::string& key,
                                                                             std::span<const int> ranks,
                                                                             std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::vector<std::optional<std::vector<std::byte>>> values(ranks.size());
  auto pause = std::chrono::milliseconds{1};
  while (true) {
    std::vector<std::size_t> asked;
    for (std::size_t index = 0; index < ranks.size(); ++index) {
      if (!values[index]) asked.push_back(index);
    }
    if (asked.empty()) return values;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto answers = std::make_shared<Answers>();
    answers->values.resize(asked.size());
    const int seconds = static_cast<int>(std::max<std::int64_t>(1, (left.count() + 999) / 1000));
    // Refreshed: a client that cached a rank's data at an earlier get would otherwise answer from it.
    const bool refresh = true;
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &seconds, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GET_REFRESH_CACHE, &refresh, PMIX_BOOL);
    for (std::size_t slot_index = 0; slot_index < asked.size(); ++slot_index) {
      pmix_proc_t peer;
      PMIX_LOAD_PROCID(&peer, session.self().nspace, static_cast<pmix_rank_t>(ranks[asked[slot_index]]));
      {
        std::lock_guard lock(answers->mutex);
        ++answers->pending;
      }
      auto slot = std::make_unique<AnswerSlot>(AnswerSlot{answers, slot_index});
      if (PMIx_Get_nb(&peer, key.c_str(), info, 2, on_answer, slot.get()) == PMIX_SUCCESS) {
        (void)slot.release();  // the callback owns it now
      } else {
        std::lock_guard lock(answers->mutex);
        --answers->pending;
      }
    }
    std::unique_lock lock(answers->mutex);
    // PMIx answers every get by its own timeout; a little more guards against one that does not.
    const bool all_answered =
        answers->changed.wait_for(lock, std::chrono::seconds(seconds + 2), [&] { return answers->pending == 0; });
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (!all_answered) return std::nullopt;
    for (std::size_t slot_index = 0; slot_index < asked.size(); ++slot_index) {
      values[asked[slot_index]] = std::move(answers->values[slot_index]);
    }
    // A server that already holds some of a rank's data answers "not found" for a key that rank
    // has not committed yet instead of waiting for it: ask again until the deadline.
    if (std::chrono::steady_clock::now() + pause >= deadline) return values;
    lock.unlock();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{50});
  }
}

}  // namespace meshcomm::detail
