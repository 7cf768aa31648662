#include "ucx_single_copy.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "environment.hpp"
#include "process_memory.hpp"
#include "ucx_single_copy_protocol.hpp"

namespace meshcomm::detail {

namespace {

bool single_copy_allowed() {
  const auto setting = environment_variable("MESHCOMM_UCX_SINGLE_COPY");
  return !setting || setting->empty() || *setting != "0";
}

/// `variable`: a byte count, with K, M or G (powers of 1024) after it; `otherwise` where unset.
std::size_t threshold_from_environment(const char* variable, std::size_t otherwise) {
  const auto setting = environment_variable(variable);
  if (!setting) return otherwise;
  return parse_byte_count(*setting, variable, {.backend = "ucx", .operation = "create"});
}

/// Throws unless every rank's `threshold` (set by `variable`) is this rank's.
void require_equal_thresholds(const std::vector<SingleCopyIdentity>& identities, int self,
                              std::uint64_t SingleCopyIdentity::*threshold, std::string_view variable) {
  const auto mine = identities[static_cast<std::size_t>(self)].*threshold;
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    if (identities[rank].*threshold != mine) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{} gives {} bytes on rank {} but {} on rank {}; every rank must send large messages "
                              "the same way",
                              variable, mine, self, identities[rank].*threshold, rank),
                  {.backend = "ucx", .operation = "create", .rank = self, .peer = static_cast<int>(rank)});
    }
  }
}

}  // namespace

bool same_host_and_user(const SingleCopyIdentity& a, const SingleCopyIdentity& b) noexcept {
  return a.process.host != 0 && a.process.host == b.process.host &&
         a.process.pid_namespace == b.process.pid_namespace && a.user == b.user;
}

SingleCopyIdentity single_copy_identity() {
  if (single_copy_allowed()) allow_peers_to_read_this_process();
  return {.process = ProcessIdentity::of_this_process(), .user = static_cast<std::uint64_t>(getuid()),
          .probe_address = memory_probe_address(),
          .threshold = threshold_from_environment("MESHCOMM_UCX_SINGLE_COPY_BYTES", kSingleCopyBytes),
          .exchange_threshold =
              threshold_from_environment("MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES", kExchangeSingleCopyBytes)};
}

SingleCopyPlan single_copy_plan(Bootstrap& bootstrap, const std::vector<SingleCopyIdentity>& identities, int self) {
  const auto& mine = identities[static_cast<std::size_t>(self)];
  require_equal_thresholds(identities, self, &SingleCopyIdentity::threshold, "MESHCOMM_UCX_SINGLE_COPY_BYTES");
  require_equal_thresholds(identities, self, &SingleCopyIdentity::exchange_threshold,
                           "MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES");
  auto same_host = [&](const SingleCopyIdentity& other) { return same_host_and_user(other, mine); };
  char could_read_all = single_copy_allowed() ? 1 : 0;
  for (std::size_t rank = 0; could_read_all != 0 && rank < identities.size(); ++rank) {
    const auto& other = identities[rank];
    if (static_cast<int>(rank) == self || !same_host(other)) continue;
    could_read_all = can_read_process(other.process.pid, other.probe_address) ? 1 : 0;
  }
  const auto flags = bootstrap.all_gather(std::as_bytes(std::span(&could_read_all, 1)));
  SingleCopyPlan plan{.peers = std::vector<char>(identities.size(), 0), .threshold = mine.threshold,
                      .exchange_threshold = mine.exchange_threshold,
                      .exchange_threshold_given =
                          environment_variable("MESHCOMM_UCX_EXCHANGE_SINGLE_COPY_BYTES").has_value()};
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    plan.peers[rank] = static_cast<int>(rank) != self && same_host(identities[rank]) && could_read_all != 0 &&
                       flags[rank] != std::byte{0};
  }
  return plan;
}

}  // namespace meshcomm::detail
