#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

/// The library's timeout when neither options nor MESHCOMM_TIMEOUT set one.
inline constexpr std::chrono::milliseconds kDefaultTimeout{300'000};

/// Parses a duration: a number of seconds ("30", "2.5") or a number with a unit ("500ms",
/// "30s", "5m"). Throws Error(invalid_argument) naming `what`, the text and the valid forms.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what);

/// Parses a byte count: digits, then optionally K, M or G (powers of 1024), below 2^40 bytes
/// ("65536", "64K", "1M"). Throws Error(invalid_argument) with `context`, naming `what`, the text
/// and the valid forms.
std::size_t parse_byte_count(std::string_view text, std::string_view what, const ErrorContext& context = {});

/// The value of environment variable `name`, if set and not empty.
std::optional<std::string_view> environment_variable(const char* name);

/// `requested` if positive, else MESHCOMM_TIMEOUT if set, else kDefaultTimeout.
std::chrono::milliseconds resolve_timeout(std::chrono::milliseconds requested);

}  // namespace meshcomm::detail
