#include "one_way_transfer_choice.hpp"

#include <fmt/format.h>

#include "environment.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail {

std::string_view to_string(OneWayTransfer transfer) noexcept {
  return transfer == OneWayTransfer::read_in_one_copy ? "read" : "ask";
}

std::string_view to_string(OneWayPolicy policy) noexcept {
  switch (policy) {
    case OneWayPolicy::read: return "read";
    case OneWayPolicy::ask: return "ask";
    case OneWayPolicy::measure: break;
  }
  return "measure";
}

OneWayPolicy one_way_policy_from_environment() {
  const auto setting = environment_variable("MESHCOMM_UCX_ONE_WAY");
  if (!setting || setting->empty()) return OneWayPolicy::measure;
  for (const auto policy : {OneWayPolicy::measure, OneWayPolicy::read, OneWayPolicy::ask}) {
    if (*setting == to_string(policy)) return policy;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("MESHCOMM_UCX_ONE_WAY = '{}' is not a way to move one-way messages; valid: measure (the "
                          "default: the faster of the two, measured), read (the receiver reads the sender's buffer "
                          "in one copy) or ask (the sender sends the bytes through UCX)",
                          *setting),
              {.backend = "ucx", .operation = "create"});
}

OneWayTransfer OneWayTransferChoice::choose(std::size_t bytes) {
  if (policy_ == OneWayPolicy::read) return OneWayTransfer::read_in_one_copy;
  if (policy_ == OneWayPolicy::ask) return OneWayTransfer::ask_for_payload;
  return static_cast<OneWayTransfer>(measured_.choose(bytes));
}

void OneWayTransferChoice::record(std::size_t bytes, OneWayTransfer transfer, std::chrono::nanoseconds took) {
  if (policy_ == OneWayPolicy::measure) measured_.record(bytes, static_cast<int>(transfer), took);
}

}  // namespace meshcomm::detail
