#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshcomm/error.hpp"
#include "meshcomm/mesh_spec.hpp"

namespace meshcomm {
namespace {

struct ValidCase {
  std::string text;
  int world;
  std::string resolved;
};

class MeshSpecValid : public ::testing::TestWithParam<ValidCase> {};

TEST_P(MeshSpecValid, ParsesAndResolves) {
  const auto& param = GetParam();
  EXPECT_EQ(MeshSpec::parse(param.text).resolved(param.world).to_string(), param.resolved);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MeshSpecValid,
    ::testing::Values(ValidCase{"1,-1,4,1", 16, "dp:1,fsdp:4,tp:4,sp:1"},
                      ValidCase{"1,-1,2,1", 4, "dp:1,fsdp:2,tp:2,sp:1"},
                      ValidCase{"2,2,1,2", 8, "dp:2,fsdp:2,tp:1,sp:2"},
                      ValidCase{"-1", 5, "dp:5"},
                      ValidCase{" 1 , -1 ", 3, "dp:1,fsdp:3"},
                      ValidCase{"dp:2,fsdp:-1,tp:4", 32, "dp:2,fsdp:4,tp:4"},
                      ValidCase{"tp:4,dp:1,sp:2", 8, "tp:4,dp:1,sp:2"},
                      ValidCase{"dp_replicate:2,dp_shard:-1,cp:1,tp:2", 8, "dp_replicate:2,dp_shard:2,cp:1,tp:2"},
                      ValidCase{"1,1,1,1", 1, "dp:1,fsdp:1,tp:1,sp:1"}));

struct InvalidCase {
  std::string text;
  int world;
  std::vector<std::string> fragments;  // each must appear in the message
};

class MeshSpecInvalid : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(MeshSpecInvalid, RejectsWithMessage) {
  const auto& param = GetParam();
  try {
    (void)MeshSpec::parse(param.text).resolved(param.world);
    FAIL() << "'" << param.text << "' was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
    const std::string message = error.what();
    EXPECT_NE(message.find("'" + param.text + "'"), std::string::npos) << "the input is quoted: " << message;
    for (const auto& fragment : param.fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, MeshSpecInvalid,
    ::testing::Values(
        InvalidCase{"", 4, {"empty", "1,-1,4,1"}},
        InvalidCase{"   ", 4, {"empty"}},
        InvalidCase{"1,x,2,1", 4, {"'x'", "not an integer"}},
        InvalidCase{"1,2.5", 4, {"'2.5'", "not an integer"}},
        InvalidCase{"1,0,2,1", 4, {"size 0", "sizes are >= 1"}},
        InvalidCase{"1,-2,2,1", 4, {"size -2"}},
        InvalidCase{"-1,-1,2,1", 4, {"more than one size is -1"}},
        InvalidCase{"dp:2,dp:2", 4, {"'dp' is named twice"}},
        InvalidCase{":2,tp:2", 4, {"nothing as its axis name"}},
        InvalidCase{"2tp:2", 4, {"'2tp'"}},
        InvalidCase{"1,,2", 4, {"item 2 is empty"}},
        InvalidCase{"1,2,", 4, {"item 3 is empty"}},
        InvalidCase{"dp:1,2", 4, {"mixes named and unnamed"}},
        InvalidCase{"1,1,1,1,1", 1, {"5 sizes", "only 4 axes", "dp,fsdp,tp,sp"}},
        InvalidCase{"2,2,1,1", 8, {"multiply to 4", "8 ranks"}},
        InvalidCase{"3,-1", 8, {"not divisible by 3", "1, 2, 4, 8"}},
        InvalidCase{"16,-1", 8, {"not divisible by 16", "1, 2, 4, 8"}},
        InvalidCase{"1,1", 0, {"world size 0"}}));

TEST(MeshSpec, FindsAxes) {
  auto spec = MeshSpec::parse("dp:2,tp:-1");
  EXPECT_EQ(spec.find("tp"), 1U);
  EXPECT_FALSE(spec.find("sp").has_value());
  EXPECT_FALSE(spec.is_resolved());
  EXPECT_TRUE(spec.resolved(4).is_resolved());
  EXPECT_EQ(spec.text(), "dp:2,tp:-1");
}

}  // namespace
}  // namespace meshcomm
