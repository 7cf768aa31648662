// The perftests' size parser: what it takes, and that nothing wraps or turns negative into huge.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/perf_options.hpp"

namespace meshcomm::perf {
namespace {

TEST(PerfSizes, UnitsArePowersOf1024) {
  EXPECT_EQ(parse_size("0", "-b"), 0u);
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("64K", "-b"), 64u << 10);
  EXPECT_EQ(parse_size("1m", "-b"), 1u << 20);
  EXPECT_EQ(parse_size("2G", "-b"), std::size_t{2} << 30);
  EXPECT_EQ(parse_size("18446744073709551615", "-e"), ~std::size_t{0});
  EXPECT_EQ(parse_size("17179869183G", "-e"), std::size_t{17179869183} << 30);
}

TEST(PerfSizes, RejectsSignsFractionsUnitsAndOverflowNamingTheOption) {
  const std::pair<const char*, const char*> bad[] = {
      {"-1", "is not a size"},
      {"-1K", "is not a size"},
      {"+8", "is not a size"},
      {" 8", "is not a size"},
      {"", "is not a size"},
      {"1.5M", "unknown unit '.5M'"},
      {"8X", "unknown unit 'X'"},
      {"18446744073709551616", "more bytes than a size can hold"},
      {"17179869184G", "more bytes than a size can hold"},
      {"16777216T", "unknown unit 'T'"},
  };
  for (const auto& [text, why] : bad) {
    try {
      (void)parse_size(text, "-e");
      ADD_FAILURE() << "'" << text << "' was taken";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("-e ") + text + " "), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace meshcomm::perf
