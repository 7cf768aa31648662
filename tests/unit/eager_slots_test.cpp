// The test cases' count of the eager slots, which they run past so that slots are reused.

#include <gtest/gtest.h>

#include "../cases/eager_cases.hpp"
#include "eager/eager_mailbox.hpp"

namespace meshcomm::detail {
namespace {

TEST(EagerSlots, TheTestCasesCountTheMailboxSlots) {
  EXPECT_EQ(testing::kEagerSlots, EagerMailbox::kSlots);
  EXPECT_EQ(testing::kEagerHeaders, EagerMailbox::kHeaders);
  EXPECT_EQ(testing::kEagerPayloadShareBytes, EagerMailbox::kPayloadShareBytes);
}

}  // namespace
}  // namespace meshcomm::detail
