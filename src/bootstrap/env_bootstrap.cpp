#include "meshcomm/env_bootstrap.hpp"

#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "../environment.hpp"
#include "meshcomm/error.hpp"
#include "star_exchange.hpp"

namespace meshcomm {

namespace {

Error bad_variable(const char* name, std::string_view value, std::string_view valid) {
  return Error(ErrorCode::invalid_argument,
               value.empty() ? fmt::format("EnvBootstrap: {} is not set; {} (torchrun and accelerate launch set it)",
                                           name, valid)
                             : fmt::format("EnvBootstrap: {} = '{}' is invalid; {}", name, value, valid),
               {.backend = "env", .operation = "EnvBootstrap"});
}

/// The integer in variable `name`, within [low, high]; `fallback` where it is unset (nothing:
/// required).
std::int64_t integer_variable(const char* name, std::int64_t low, std::int64_t high, std::string_view valid,
                              std::optional<std::int64_t> fallback = std::nullopt) {
  const auto text = detail::environment_variable(name);
  if (!text) {
    if (fallback) return *fallback;
    throw bad_variable(name, "", valid);
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || value < low || value > high) {
    throw bad_variable(name, *text, valid);
  }
  return value;
}

}  // namespace

EnvBootstrap::EnvBootstrap(std::chrono::milliseconds timeout) : timeout_(detail::resolve_timeout(timeout)) {
  size_ = static_cast<int>(integer_variable("WORLD_SIZE", 1, std::numeric_limits<int>::max(),
                                            "give the number of processes, at least 1"));
  rank_ = static_cast<int>(
      integer_variable("RANK", 0, size_ - 1, fmt::format("give this process's rank in [0, WORLD_SIZE = {})", size_)));
  local_rank_ = static_cast<int>(integer_variable("LOCAL_RANK", 0, std::numeric_limits<int>::max(),
                                                  "give this process's index on its node, at least 0", rank_));
  address_ = std::string(detail::environment_variable("MASTER_ADDR").value_or("127.0.0.1"));
  if (detail::environment_variable("MESHCOMM_BOOTSTRAP_PORT")) {
    port_ = static_cast<std::uint16_t>(
        integer_variable("MESHCOMM_BOOTSTRAP_PORT", 1, 65535, "give a TCP port in [1, 65535] for rank 0 to listen on"));
    port_source_ = "MESHCOMM_BOOTSTRAP_PORT";
  } else {
    port_ = static_cast<std::uint16_t>(
        integer_variable("MASTER_PORT", 1, 65534,
                         "give torch's store port in [1, 65534] (meshcomm listens on the next one), or set "
                         "MESHCOMM_BOOTSTRAP_PORT") +
        1);
    port_source_ = "MASTER_PORT + 1";
  }
  if (size_ == 1) return;
  if (rank_ == 0) {
    exchange_ = detail::make_star_server(size_, detail::listen_on(port_, port_source_), timeout_);
  } else {
    exchange_ = detail::make_star_client(rank_, size_, address_, port_, timeout_);
  }
}

EnvBootstrap::~EnvBootstrap() = default;

std::string EnvBootstrap::description() const {
  return fmt::format("env: rank {} of {} (RANK, WORLD_SIZE: torchrun's environment), rank 0 listening at {}:{} ({})",
                     rank_, size_, address_, port_, port_source_);
}

std::vector<std::byte> EnvBootstrap::all_gather(std::span<const std::byte> mine) {
  if (!exchange_) return {mine.begin(), mine.end()};
  return exchange_->all_gather(mine);
}

void EnvBootstrap::barrier() {
  const std::byte here{1};
  (void)all_gather(std::span(&here, 1));
}

}  // namespace meshcomm
