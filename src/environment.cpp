#include "environment.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what) {
  auto invalid = [&] {
    return Error(ErrorCode::invalid_argument,
                 fmt::format("{} = '{}' is not a duration; give a positive number of seconds ('30', "
                             "'2.5') or a number with a unit ('500ms', '30s', '5m')",
                             what, text),
                 {.operation = std::string(what)});
  };
  std::string owned(text);
  char* end = nullptr;
  double value = std::strtod(owned.c_str(), &end);
  if (end == owned.c_str() || !std::isfinite(value) || value <= 0) throw invalid();
  std::string_view unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60'000;
  } else {
    throw invalid();
  }
  double milliseconds = value * scale;
  if (milliseconds < 1 || milliseconds > 1e12) throw invalid();
  return std::chrono::milliseconds{static_cast<std::int64_t>(milliseconds)};
}

std::size_t parse_byte_count(std::string_view text, std::string_view what, const ErrorContext& context) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 40;
  std::size_t digits = 0;
  std::uint64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9' && value < kLimit) {
    value = value * 10 + static_cast<std::uint64_t>(text[digits++] - '0');
  }
  const std::string_view unit = text.substr(digits);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (digits == 0 || shift < 0 || value >= (kLimit >> shift)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} = '{}' is not a size; valid: a byte count below 2^40 such as 65536, 64K, 1M or 1G",
                            what, text),
                context);
  }
  return static_cast<std::size_t>(value << shift);
}

std::optional<std::string_view> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string_view(value);
}

std::chrono::milliseconds resolve_timeout(std::chrono::milliseconds requested) {
  if (requested.count() > 0) return requested;
  if (auto text = environment_variable("MESHCOMM_TIMEOUT")) return parse_duration(*text, "MESHCOMM_TIMEOUT");
  return kDefaultTimeout;
}

}  // namespace meshcomm::detail
