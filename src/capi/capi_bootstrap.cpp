#include <vector>

#include "capi_support.hpp"
#include "meshcomm/caller_bootstrap.hpp"

namespace meshcomm::capi {
namespace {

/// The caller's C exchange as a CallerExchange.
CallerExchange from_oob(const meshcommOob_t& oob) {
  const char* function = "meshcommBootstrapFromOob";
  if (oob.allgather == nullptr || oob.test == nullptr || oob.release == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: oob.{} is NULL; allgather, test and release are required", function,
                            oob.allgather == nullptr ? "allgather" : oob.test == nullptr ? "test" : "release"),
                {.operation = function});
  }
  if (oob.timeout_ms < 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: oob.timeout_ms = {} must be 0 (the default) or positive", function, oob.timeout_ms),
                {.operation = function});
  }
  CallerExchange exchange{.rank = oob.rank, .size = oob.nranks, .timeout = std::chrono::milliseconds{oob.timeout_ms}};
  exchange.start_all_gather = [oob](std::span<const std::byte> mine, std::span<std::byte> gathered) -> void* {
    void* request = nullptr;
    return oob.allgather(oob.context, mine.data(), gathered.data(), mine.size(), &request) == 0 ? request : nullptr;
  };
  if (oob.barrier != nullptr) {
    exchange.start_barrier = [oob]() -> void* {
      void* request = nullptr;
      return oob.barrier(oob.context, &request) == 0 ? request : nullptr;
    };
  }
  exchange.test = [oob](void* request) { return oob.test(oob.context, request); };
  exchange.release = [oob](void* request) { oob.release(oob.context, request); };
  if (oob.missing != nullptr) {
    exchange.missing = [oob](void* request) {
      std::vector<int> ranks(static_cast<std::size_t>(std::max(oob.nranks, 1)));
      const int count = oob.missing(oob.context, request, ranks.data(), static_cast<int>(ranks.size()));
      ranks.resize(static_cast<std::size_t>(std::clamp(count, 0, static_cast<int>(ranks.size()))));
      return ranks;
    };
  }
  return exchange;
}

meshcommBootstrap_t wrap_bootstrap(std::unique_ptr<Bootstrap> bootstrap) {
  auto* handle = new meshcommBootstrap;
  handle->name = std::string(bootstrap->name());
  handle->bootstrap = std::move(bootstrap);
  return handle;
}

}  // namespace
}  // namespace meshcomm::capi

using namespace meshcomm::capi;

extern "C" {

meshcommResult_t meshcommBootstrapFromEnvironment(int64_t timeout_ms, meshcommBootstrap_t* bootstrap) {
  return guarded(nullptr, [&] {
    const char* function = "meshcommBootstrapFromEnvironment";
    auto& result = output(bootstrap, "bootstrap", function);
    if (timeout_ms < 0) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("{}: timeout_ms = {} must be 0 (the default) or positive", function, timeout_ms),
                            {.operation = function});
    }
    result = wrap_bootstrap(meshcomm::Bootstrap::from_environment(std::chrono::milliseconds{timeout_ms}));
  });
}

meshcommResult_t meshcommBootstrapFromOob(const meshcommOob_t* oob, meshcommBootstrap_t* bootstrap) {
  return guarded(nullptr, [&] {
    const char* function = "meshcommBootstrapFromOob";
    auto& result = output(bootstrap, "bootstrap", function);
    const meshcommOob_t defaults = MESHCOMM_OOB_INITIALIZER;
    const auto exchange = from_oob(read_required_config(oob, defaults, "oob", "MESHCOMM_OOB_INITIALIZER", function));
    result = wrap_bootstrap(std::make_unique<meshcomm::CallerBootstrap>(exchange));
  });
}

meshcommResult_t meshcommBootstrapInfo(meshcommBootstrap_t bootstrap, int* rank, int* nranks, const char** name) {
  return guarded(nullptr, [&] {
    auto& handle = checked(bootstrap, HandleMagic::bootstrap, "bootstrap", "meshcommBootstrapInfo");
    if (rank != nullptr) *rank = handle.bootstrap->rank();
    if (nranks != nullptr) *nranks = handle.bootstrap->size();
    if (name != nullptr) *name = handle.name.c_str();
  });
}

meshcommResult_t meshcommBootstrapDestroy(meshcommBootstrap_t bootstrap) {
  return guarded(nullptr,
                 [&] { destroy_handle(bootstrap, HandleMagic::bootstrap, "bootstrap", "meshcommBootstrapDestroy"); });
}

}  // extern "C"
