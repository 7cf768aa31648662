// From what size an eager broadcast's root lends its allocate_shared buffer to its readers.

#include <gtest/gtest.h>

#include <limits>

#include "eager/eager_mailbox.hpp"

namespace meshcomm::detail {
namespace {

TEST(EagerBroadcastLending, From32KiBWhereRanksHaveCoresOfTheirOwn) {
  EXPECT_EQ(EagerMailbox::shared_broadcast_lending_threshold(PeerReads::automatic, false),
            EagerMailbox::kLendSharedBroadcastsFrom);
}

TEST(EagerBroadcastLending, FromHalfAMebibyteWhereRanksShareCores) {
  EXPECT_EQ(EagerMailbox::shared_broadcast_lending_threshold(PeerReads::automatic, true), 512u * 1024);
  EXPECT_GT(EagerMailbox::kLendSharedBroadcastsWhereCoresAreSharedFrom, EagerMailbox::kLendSharedBroadcastsFrom);
}

TEST(EagerBroadcastLending, AlwaysFrom32KiBAndNeverAtAll) {
  for (bool ranks_share_cores : {false, true}) {
    EXPECT_EQ(EagerMailbox::shared_broadcast_lending_threshold(PeerReads::always, ranks_share_cores),
              EagerMailbox::kLendSharedBroadcastsFrom);
    EXPECT_EQ(EagerMailbox::shared_broadcast_lending_threshold(PeerReads::never, ranks_share_cores),
              std::numeric_limits<std::size_t>::max());
  }
}

}  // namespace
}  // namespace meshcomm::detail
