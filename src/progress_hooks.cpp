#include "progress_hooks.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace meshcomm::detail {

namespace {

struct Registry {
  std::shared_mutex mutex;  ///< shared while driving, exclusive while a hook comes or goes
  std::vector<const ProgressHook*> hooks;
  std::atomic<std::size_t> count{0};
};

Registry& registry() {
  static Registry* const instance = new Registry;  // never destroyed: hooks may outlive statics
  return *instance;
}

[[gnu::tls_model("initial-exec")]] thread_local bool driving = false;  // initial-exec: as progress_notes (work.cpp)

}  // namespace

ProgressHook::ProgressHook(std::function<void()> drive) : drive_(std::move(drive)) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  r.hooks.push_back(this);
  r.count.store(r.hooks.size(), std::memory_order_relaxed);
}

ProgressHook::~ProgressHook() {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  r.hooks.erase(std::remove(r.hooks.begin(), r.hooks.end(), this), r.hooks.end());
  r.count.store(r.hooks.size(), std::memory_order_relaxed);
}

void drive_progress_hooks() noexcept {
  auto& r = registry();
  if (driving || r.count.load(std::memory_order_relaxed) == 0) return;
  driving = true;
  {
    std::shared_lock lock(r.mutex);
    for (const auto* hook : r.hooks) hook->drive();
  }
  driving = false;
}

}  // namespace meshcomm::detail
