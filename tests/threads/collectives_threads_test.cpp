// The collective matrix over the inproc backend at world sizes 1, 2, 3, 4, 7 and 16.

#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>

#include "cases/collective_cases.hpp"
#include "cases/eager_cases.hpp"
#include "harness/thread_ranks.hpp"

namespace meshcomm::testing {
namespace {

class InprocCollectives : public ::testing::TestWithParam<std::tuple<CollectiveKind, int>> {};

TEST_P(InprocCollectives, ExactResults) {
  const auto [kind, size] = GetParam();
  run_ranks(size, [kind = kind](Communicator& comm) { check_collective_matrix(comm, kind); });
}

TEST(InprocCollectives, MismatchedCallsFailOnEveryRank) {
  for (int size : {2, 3}) run_ranks(size, check_mismatched_calls);
}

TEST(InprocCollectives, EagerCallsRunAheadOfSlowRanks) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_calls_run_ahead);
}

TEST(InprocCollectives, EagerBroadcastsStoreBothWays) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_broadcasts_store_both_ways);
}

TEST(InprocCollectives, EagerBroadcastsInPieces) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_broadcasts_in_pieces);
}

TEST(InprocCollectives, EagerAllReducesInPieces) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_all_reduces_in_pieces);
}

TEST(InprocCollectives, EagerBroadcastsOfDataAtRest) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_broadcasts_of_data_at_rest);
}

TEST(InprocCollectives, EagerCopiesStoreBothWays) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_copies_store_both_ways);
}

TEST(InprocCollectives, EagerAllToAllv) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_all_to_allv);
}

TEST(InprocCollectives, EagerAllToAllsInPlaceSwapBlocks) {
  ::setenv("MESHCOMM_EAGER_PEER_READS", "always", 1);  // read as the communicators are created
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_all_to_alls_in_place);
  ::unsetenv("MESHCOMM_EAGER_PEER_READS");
}

TEST(InprocCollectives, EagerBarrier) {
  for (int size : {2, 3, 4}) run_ranks(size, check_eager_barrier);
}

TEST(InprocCollectives, EagerTimeoutNamesAMissingRank) {
  for (int size : {2, 3}) run_ranks(size, check_eager_timeout_names_a_missing_rank);
}

TEST(InprocCollectives, FingerprintExchangeNamesEveryRanksCall) {
  ::setenv("MESHCOMM_DEBUG", "fingerprint", 1);  // read as the communicators are created
  for (int size : {2, 3}) run_ranks(size, check_fingerprint_exchange);
  ::unsetenv("MESHCOMM_DEBUG");
}

TEST(InprocCollectives, CallSiteExchangeCatchesASkippedCall) {
  ::setenv("MESHCOMM_DEBUG", "callsite", 1);  // read as the communicators are created
  for (int size : {2, 3}) run_ranks(size, check_call_site_exchange);
  ::unsetenv("MESHCOMM_DEBUG");
}

TEST(InprocCollectives, CountsThatWouldWrapAreRefused) {
  for (int size : {1, 2, 3}) run_ranks(size, check_counts_that_would_wrap);
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, InprocCollectives,
    ::testing::Combine(::testing::Values(CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                         CollectiveKind::all_reduce, CollectiveKind::all_to_all,
                                         CollectiveKind::all_to_allv, CollectiveKind::broadcast),
                       ::testing::Values(1, 2, 3, 4, 7, 16)),
    [](const auto& param_info) {
      return std::string(to_string(std::get<0>(param_info.param))) + "_world" +
             std::to_string(std::get<1>(param_info.param));
    });

}  // namespace
}  // namespace meshcomm::testing
