#pragma once

// How every bootstrap words a step that some ranks never reached.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// "ranks 2, 3 never arrived at this step" / "every rank arrived, but not within one timeout of the others:
/// some gave up before the last came" / "some rank of the communicator has not joined it"
/// (nothing known).
std::string describe_arrivals(const std::optional<std::vector<int>>& missing);

/// The timeout error of bootstrap `bootstrap`'s `operation` on `rank`: what did not complete
/// within `timeout`, and who never arrived (`missing`, where known); `peer` is the first of them.
Error arrival_timeout(std::string_view bootstrap, std::string_view operation, int rank,
                      std::chrono::milliseconds timeout, const std::optional<std::vector<int>>& missing);

}  // namespace meshcomm::detail
