// The selection table on its own: which row answers a call, and which answer holds at every size.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm_list.hpp"
#include "meshcomm/error.hpp"
#include "selection.hpp"

namespace meshcomm::detail {
namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

/// The first row that answers, for `ranks` ranks on one host, out of place unless `in_place`;
/// `eager` declines (as it does for calls over its slots' size) unless `eager_runs`.
std::string preferred(const SelectionTable& table, CollectiveKind kind, BackendKind backend, std::size_t bytes,
                      int ranks = 2, bool eager_runs = false, bool in_place = false) {
  auto name = table.first_preferred(kind, backend, bytes, ranks, true, in_place,
                                    [&](std::string_view algorithm) { return eager_runs || algorithm != "eager"; });
  return name ? std::string(*name) : std::string("(none)");
}

TEST(SelectionTable, EagerComesFirstWhereItRunsExceptOnNccl) {
  const auto table = SelectionTable::measured_defaults();
  for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                    CollectiveKind::all_to_all, CollectiveKind::all_to_allv, CollectiveKind::broadcast}) {
    for (auto backend : {BackendKind::mpi, BackendKind::ucx, BackendKind::inproc}) {
      EXPECT_EQ(preferred(table, kind, backend, 8, 2, true), "eager") << to_string(kind) << " " << to_string(backend);
    }
    EXPECT_EQ(preferred(table, kind, BackendKind::nccl, 8, 2, true), "native") << to_string(kind);
  }
}

TEST(SelectionTable, RowsAnswerBySizeAndBackend) {
  const auto table = SelectionTable::measured_defaults();
  EXPECT_EQ(preferred(table, CollectiveKind::all_gather, BackendKind::mpi, 1 * KiB), "native");
  EXPECT_EQ(preferred(table, CollectiveKind::all_gather, BackendKind::mpi, 64 * KiB), "recursive_doubling");
  EXPECT_EQ(preferred(table, CollectiveKind::all_gather, BackendKind::mpi, 1 * MiB), "shm");
  EXPECT_EQ(preferred(table, CollectiveKind::all_gather, BackendKind::inproc, 1 * MiB), "ring");
  EXPECT_EQ(preferred(table, CollectiveKind::all_gather, BackendKind::nccl, 1 * KiB), "native");
  EXPECT_EQ(preferred(table, CollectiveKind::broadcast, BackendKind::mpi, 1 * KiB), "binomial");
  EXPECT_EQ(preferred(table, CollectiveKind::broadcast, BackendKind::mpi, 256 * KiB), "binomial");
  EXPECT_EQ(preferred(table, CollectiveKind::broadcast, BackendKind::mpi, 1 * MiB), "shm");
}

TEST(SelectionTable, BroadcastIsSharedFromHalfAMebibyteAndOnMpiOpenMpisOwnBelowItFromThreeRanks) {
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](BackendKind backend, std::size_t bytes, int ranks) {
    return preferred(table, CollectiveKind::broadcast, backend, bytes, ranks);
  };
  EXPECT_EQ(at(BackendKind::mpi, 1 * KiB, 4), "binomial");
  EXPECT_EQ(at(BackendKind::mpi, 256 * KiB, 2), "binomial");
  EXPECT_EQ(at(BackendKind::mpi, 256 * KiB, 3), "native");
  EXPECT_EQ(at(BackendKind::ucx, 256 * KiB, 4), "binomial");
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    EXPECT_EQ(at(backend, 512 * KiB, 2), "shm") << to_string(backend);
    EXPECT_EQ(at(backend, 64 * MiB, 4), "shm") << to_string(backend);
  }
  EXPECT_EQ(at(BackendKind::inproc, 1 * MiB, 4), "binomial");
  // Where a buffer is not shared, shm hands the call to the first row past it that can take a
  // call over: never native (CollectiveEngine::takeover_for), so the tree on every backend.
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    for (int ranks : {2, 4}) {
      auto takes_over = [](std::string_view algorithm) {
        return algorithm != "eager" && algorithm != "shm" && algorithm != "native";
      };
      auto name = table.first_preferred(CollectiveKind::broadcast, backend, 1 * MiB, ranks, true, false, takes_over);
      EXPECT_EQ(name.value_or("(none)"), "binomial") << to_string(backend) << " " << ranks;
    }
  }
}

TEST(SelectionTable, AllToAllIsSharedFromHalfAMebibyteElsePairwise) {
  const auto table = SelectionTable::measured_defaults();
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    for (int ranks : {2, 4}) {
      EXPECT_EQ(preferred(table, CollectiveKind::all_to_all, backend, 256 * KiB, ranks), "pairwise");
      EXPECT_EQ(preferred(table, CollectiveKind::all_to_all, backend, 512 * KiB, ranks), "shm");
      auto takes_over = [](std::string_view algorithm) { return algorithm != "eager" && algorithm != "shm"; };
      auto name = table.first_preferred(CollectiveKind::all_to_all, backend, 64 * MiB, ranks, true, false, takes_over);
      EXPECT_EQ(name.value_or("(none)"), "pairwise") << to_string(backend) << " " << ranks;
    }
  }
  EXPECT_EQ(preferred(table, CollectiveKind::all_to_all, BackendKind::inproc, 1 * MiB, 4), "pairwise");
}

TEST(SelectionTable, RowsAnswerByRanks) {
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](int ranks) { return preferred(table, CollectiveKind::all_gather, BackendKind::mpi, 1 * KiB, ranks); };
  EXPECT_EQ(at(2), "native");
  EXPECT_EQ(at(4), "recursive_doubling");
}

TEST(SelectionTable, AllReduceIsPairwiseFromFourToNineRanksThenHalvesAndDoublesAsAtTwoRanksFrom4MiB) {
  // Past the shm row, which hands calls on buffers that are not shared to the next row, where
  // eager does not run (ranks on several hosts, more than 16 of them, or no shared memory); where
  // it runs, the eager path's runner-up, against which rank 0 measures it (shm_single_copy.cpp).
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](BackendKind backend, std::size_t bytes, int ranks, bool on_one_host = true, bool in_place = true) {
    auto name = table.first_preferred(
        CollectiveKind::all_reduce, backend, bytes, ranks, on_one_host, in_place,
        [](std::string_view algorithm) { return algorithm != "eager" && algorithm != "shm"; });
    return name ? std::string(*name) : std::string("(none)");
  };
  auto in_place = [&](BackendKind backend, std::size_t bytes, int ranks) {
    return preferred(table, CollectiveKind::all_reduce, backend, bytes, ranks, false, true);
  };
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    // Two ranks exchange whole vectors below 192 KiB: one single copy each way. In place the ring
    // takes 192 KiB up to the shm row.
    EXPECT_EQ(in_place(backend, 192 * KiB - 1, 2), "recursive_doubling");
    EXPECT_EQ(in_place(backend, 192 * KiB, 2), "ring");
    EXPECT_EQ(in_place(backend, 512 * KiB - 1, 2), "ring");
    EXPECT_EQ(in_place(backend, 512 * KiB - 1, 3), "ring");
    EXPECT_EQ(in_place(backend, 512 * KiB, 2), "shm");
    EXPECT_EQ(in_place(backend, 64 * MiB, 16), "shm");
    // Out of place, on one host, whole vectors below the shm row; past it the ring.
    EXPECT_EQ(preferred(table, CollectiveKind::all_reduce, backend, 192 * KiB, 2), "recursive_doubling");
    EXPECT_EQ(preferred(table, CollectiveKind::all_reduce, backend, 512 * KiB - 1, 3), "ring");
    EXPECT_EQ(at(backend, 1 * MiB, 2, true, false), "ring");
    EXPECT_EQ(at(backend, 4 * MiB - 4, 2, true, false), "ring");
    EXPECT_EQ(at(backend, 4 * MiB, 2, true, false), "rabenseifner");
    EXPECT_EQ(at(backend, 1 * MiB, 2, false, false), "ring");
    EXPECT_EQ(at(backend, 1 * MiB, 3, true, false), "ring");
    EXPECT_EQ(at(backend, 64 * KiB, 4), "recursive_doubling");
    EXPECT_EQ(at(backend, 128 * KiB, 4), "pairwise");
    EXPECT_EQ(at(backend, 64 * MiB, 9), "pairwise");
    EXPECT_EQ(at(backend, 128 * KiB, 16), "rabenseifner");
    EXPECT_EQ(at(backend, 64 * MiB, 16), "rabenseifner");
    EXPECT_EQ(at(backend, 1 * MiB, 3), "ring");
    EXPECT_EQ(at(backend, 1 * MiB, 2), "ring");
    // Two ranks of one host from 4 to 64 MiB: one exchange of halves each way, not the ring's chunks.
    EXPECT_EQ(at(backend, 4 * MiB - 4, 2), "ring");
    EXPECT_EQ(at(backend, 4 * MiB, 2), "rabenseifner");
    EXPECT_EQ(at(backend, 64 * MiB - 4, 2), "rabenseifner");
    EXPECT_EQ(at(backend, 64 * MiB, 2), "ring");
    EXPECT_EQ(at(backend, 4 * MiB, 3), "ring");
    // Between hosts a network moves the ring's chunks while the last one is summed.
    EXPECT_EQ(at(backend, 16 * MiB, 2, false), "ring");
  }
  EXPECT_EQ(preferred(table, CollectiveKind::all_reduce, BackendKind::inproc, 16 * MiB, 2), "ring");
  EXPECT_EQ(preferred(table, CollectiveKind::all_reduce, BackendKind::inproc, 256 * KiB, 2), "ring");
}

TEST(SelectionTable, AllReduceIsEagerInPiecesBelowTheShmRowFromTwoToEightRanks) {
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](BackendKind backend, std::size_t bytes, int ranks, bool in_place) {
    return preferred(table, CollectiveKind::all_reduce, backend, bytes, ranks, true, in_place);
  };
  for (bool in_place : {false, true}) {
    for (auto backend : {BackendKind::mpi, BackendKind::ucx, BackendKind::inproc}) {
      for (int ranks : {2, 3, 4, 8}) {
        // Two ranks of one host on mpi and ucx exchange whole vectors out of place, as below 64 KiB
        // past the slots.
        const bool whole_vectors = ranks == 2 && !in_place && backend != BackendKind::inproc;
        const auto expected = whole_vectors ? "recursive_doubling" : "eager";
        EXPECT_EQ(at(backend, 64 * KiB + 4, ranks, in_place), expected) << to_string(backend) << " " << ranks;
        EXPECT_EQ(at(backend, 512 * KiB - 4, ranks, in_place), expected) << to_string(backend) << " " << ranks;
      }
      // Past 8 ranks a slot's payload, one operation, and no more.
      EXPECT_EQ(at(backend, 64 * KiB, 9, in_place), "eager") << to_string(backend);
      EXPECT_EQ(at(backend, 64 * KiB + 4, 9, in_place), "recursive_doubling") << to_string(backend);
      EXPECT_EQ(at(backend, 8, 16, in_place), "eager") << to_string(backend);
    }
    // From 512 KiB shm comes first where it runs; on inproc, which has none, the ring.
    for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
      EXPECT_EQ(at(backend, 512 * KiB, 3, in_place), "shm") << to_string(backend);
    }
    EXPECT_EQ(at(BackendKind::inproc, 512 * KiB, 2, in_place), "ring");
    EXPECT_EQ(at(BackendKind::nccl, 256 * KiB, 2, in_place), "native");
  }
}

TEST(SelectionTable, AllReduceOnPlainBuffersPastTheShmRowIsEagerAtTwoAndThreeRanks) {
  // What the shm row hands a call on buffers that are not shared over to where eager runs (on
  // the eager slots, which the shm path reserves for it: Algorithm::start_in_slots_if), unless
  // rank 0 measured its runner-up faster (AllReduceIsPairwiseFromFourToNine... says which).
  const auto table = SelectionTable::measured_defaults();
  auto past_shm = [&](BackendKind backend, std::size_t bytes, int ranks, bool in_place) {
    auto name = table.first_preferred(CollectiveKind::all_reduce, backend, bytes, ranks, true, in_place,
                                      [](std::string_view algorithm) { return algorithm != "shm"; });
    return name ? std::string(*name) : std::string("(none)");
  };
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    for (int ranks : {2, 3}) {
      for (bool in_place : {false, true}) {
        for (std::size_t bytes : {512 * KiB, 4 * MiB - 4, 16 * MiB, 64 * MiB}) {
          EXPECT_EQ(past_shm(backend, bytes, ranks, in_place), "eager")
              << to_string(backend) << " " << ranks << " ranks, " << bytes << " bytes, in place " << in_place;
        }
      }
    }
    EXPECT_EQ(past_shm(backend, 1 * MiB, 4, true), "pairwise");
  }
  EXPECT_EQ(past_shm(BackendKind::inproc, 1 * MiB, 3, true), "ring");
}

TEST(SelectionTable, MpiReduceScatterHalvesFromTenRanksBelowTheShmRow) {
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](std::size_t bytes, int ranks) {
    return preferred(table, CollectiveKind::reduce_scatter, BackendKind::mpi, bytes, ranks);
  };
  EXPECT_EQ(at(256 * KiB, 16), "recursive_halving");
  EXPECT_EQ(at(256 * KiB, 4), "pairwise");
  EXPECT_EQ(at(256 * KiB, 2), "ring");
  EXPECT_EQ(at(1 * MiB, 4), "shm");
}

TEST(SelectionTable, MpiReduceScatterOnPlainBuffersHalvesAtTwoRanksFrom4MiBIsPairwiseToNineThenHalvesBelow16MiB) {
  // What the shm row hands a call over to where some rank's buffer is not shared: the next row
  // past it (CollectiveEngine::takeover_for skips the algorithm handing over).
  const auto table = SelectionTable::measured_defaults();
  auto past_shm = [&](std::size_t bytes, int ranks, bool on_one_host = true) {
    auto name = table.first_preferred(
        CollectiveKind::reduce_scatter, BackendKind::mpi, bytes, ranks, on_one_host, false,
        [](std::string_view algorithm) { return algorithm != "eager" && algorithm != "shm"; });
    return name ? std::string(*name) : std::string("(none)");
  };
  EXPECT_EQ(past_shm(1 * MiB, 3), "pairwise");
  EXPECT_EQ(past_shm(64 * MiB, 9), "pairwise");
  EXPECT_EQ(past_shm(1 * MiB, 16), "recursive_halving");
  EXPECT_EQ(past_shm(16 * MiB - 1, 16), "recursive_halving");
  EXPECT_EQ(past_shm(16 * MiB, 16), "ring");
  EXPECT_EQ(past_shm(1 * MiB, 2), "ring");
  // Two ranks of one host from 4 to 64 MiB (on ucx too): one exchange of halves, not the ring's chunks.
  EXPECT_EQ(past_shm(4 * MiB - 8, 2), "ring");
  EXPECT_EQ(past_shm(4 * MiB, 2), "recursive_halving");
  EXPECT_EQ(past_shm(64 * MiB - 8, 2), "recursive_halving");
  EXPECT_EQ(past_shm(64 * MiB, 2), "ring");
  EXPECT_EQ(past_shm(4 * MiB, 3), "pairwise");
  EXPECT_EQ(past_shm(16 * MiB, 2, false), "ring") << "two ranks on two hosts";
  auto ucx_past_shm = table.first_preferred(
      CollectiveKind::reduce_scatter, BackendKind::ucx, 16 * MiB, 2, true, false,
      [](std::string_view algorithm) { return algorithm != "eager" && algorithm != "shm"; });
  EXPECT_EQ(ucx_past_shm.value_or("(none)"), "recursive_halving");
}

TEST(SelectionTable, AllGatherIsPairwiseFromThreeToNineRanksPastTheRowsBeforeIt) {
  const auto table = SelectionTable::measured_defaults();
  // The first row whose algorithm is not among `declining` (eager declines as in preferred();
  // recursive doubling does at rank counts that are not powers of two, shm on buffers that are
  // not shared).
  auto past = [&](BackendKind backend, std::size_t bytes, int ranks, std::vector<std::string_view> declining) {
    declining.push_back("eager");
    auto runs = [&](std::string_view algorithm) {
      return std::find(declining.begin(), declining.end(), algorithm) == declining.end();
    };
    auto name = table.first_preferred(CollectiveKind::all_gather, backend, bytes, ranks, true, false, runs);
    return name ? std::string(*name) : std::string("(none)");
  };
  for (auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    EXPECT_EQ(past(backend, 64 * KiB, 4, {}), "recursive_doubling");
    EXPECT_EQ(past(backend, 64 * KiB, 3, {"recursive_doubling"}), "pairwise");
    EXPECT_EQ(past(backend, 1 * MiB, 4, {}), "shm");
    EXPECT_EQ(past(backend, 1 * MiB, 3, {"shm"}), "pairwise");
    EXPECT_EQ(past(backend, 64 * MiB, 9, {"shm"}), "pairwise");
    EXPECT_EQ(past(backend, 1 * MiB, 2, {"shm"}), "ring");
    EXPECT_EQ(past(backend, 1 * MiB, 10, {"shm"}), "ring");
  }
  EXPECT_EQ(past(BackendKind::inproc, 1 * MiB, 4, {}), "ring");
}

TEST(SelectionTable, RowsThatDeclineAreSkipped) {
  const auto table = SelectionTable::measured_defaults();
  auto name = table.first_preferred(CollectiveKind::all_gather, BackendKind::mpi, 1 * MiB, 2, true, false,
                                    [](std::string_view algorithm) { return algorithm != "shm" && algorithm != "eager"; });
  ASSERT_TRUE(name);
  EXPECT_EQ(*name, "ring");
}

TEST(SelectionTable, RulesForABackendAreItsRowsAndAnyBackendsInTableOrder) {
  const auto table = SelectionTable::measured_defaults();
  const auto rules = table.rules_for(CollectiveKind::all_gather, BackendKind::mpi);
  std::vector<std::string_view> names;
  for (const auto& rule : rules) {
    EXPECT_EQ(rule.kind, CollectiveKind::all_gather);
    EXPECT_TRUE(rule.backend == BackendKind::mpi || rule.backend == BackendKind::automatic);
    names.push_back(rule.algorithm);
  }
  // The same answers as the whole table: every row it passes over belongs to another collective
  // or backend.
  for (std::size_t bytes : {std::size_t{8}, 1 * KiB, 64 * KiB, 1 * MiB, 64 * MiB}) {
    std::string_view first;
    for (const auto& rule : rules) {
      if (rule.holds(bytes, 2, true, false) && rule.algorithm != "eager") {
        first = rule.algorithm;
        break;
      }
    }
    EXPECT_EQ(first, preferred(table, CollectiveKind::all_gather, BackendKind::mpi, bytes)) << bytes;
  }
  // Eager comes first (any backend's row, then mpi's own for two ranks), then mpi's own rows and
  // those of any backend.
  ASSERT_GE(names.size(), 3U);
  EXPECT_EQ(names[0], "eager");
  EXPECT_EQ(names[1], "eager");
  EXPECT_EQ(names[2], "native");
  EXPECT_EQ(std::count(names.begin(), names.end(), "shm"), 1) << "the ucx row's shm is not mpi's";
  EXPECT_EQ(std::count(names.begin(), names.end(), "eager"), 2) << "the ucx row's eager is not mpi's";
}

TEST(SelectionTable, UnconditionalFirstOnlyWhereTheFirstRowHoldsAtEverySize) {
  const auto table = SelectionTable::measured_defaults();
  for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                    CollectiveKind::all_to_all, CollectiveKind::all_to_allv, CollectiveKind::broadcast}) {
    auto name = table.unconditional_first(kind, BackendKind::nccl);
    ASSERT_TRUE(name) << to_string(kind);
    EXPECT_EQ(*name, "native") << to_string(kind);
  }
  // Elsewhere `eager` comes first at every size, but it declines calls over its slots' size (an
  // all_to_allv's it hands over): the engine must ask it per call, so no backend's own collective
  // is taken unconditionally.
  for (auto backend : {BackendKind::mpi, BackendKind::ucx, BackendKind::inproc}) {
    EXPECT_EQ(table.unconditional_first(CollectiveKind::all_to_allv, backend).value_or(""), "eager");
    // Below 512 KiB only (EagerTakesAllGathersAndAllToAllsBelow512KiB).
    EXPECT_FALSE(table.unconditional_first(CollectiveKind::all_gather, backend));
    EXPECT_FALSE(table.unconditional_first(CollectiveKind::all_to_all, backend));
  }
}

TEST(SelectionTable, EagerTakesAllGathersAndAllToAllsBelow512KiBAndTwoRanksPastIt) {
  // Where it runs: up to its slots' size, or where the peers read every payload from its
  // writer's buffer (EagerMailbox::takes). At two ranks on mpi and ucx it comes before the shm
  // row at every size (all-gather) and up to 8 MiB (all-to-all); where it declines, shm follows.
  const auto table = SelectionTable::measured_defaults();
  constexpr std::size_t kEverySize = std::size_t{1} << 40;
  const std::map<CollectiveKind, std::size_t> two_ranks_up_to{{CollectiveKind::all_gather, kEverySize},
                                                              {CollectiveKind::all_to_all, 8 * MiB}};
  for (const auto& [kind, up_to] : two_ranks_up_to) {
    auto at = [&](BackendKind backend, std::size_t bytes, int ranks, bool eager_runs = true) {
      return preferred(table, kind, backend, bytes, ranks, eager_runs);
    };
    for (const auto backend : {BackendKind::mpi, BackendKind::ucx}) {
      EXPECT_EQ(at(backend, 64 * KiB, 2), "eager") << to_string(kind);
      EXPECT_EQ(at(backend, 512 * KiB - 4, 2), "eager") << to_string(kind);
      EXPECT_EQ(at(backend, 512 * KiB, 2), "eager") << to_string(kind);
      EXPECT_EQ(at(backend, up_to - 4, 2), "eager") << to_string(kind);
      if (up_to != kEverySize) {
        EXPECT_EQ(at(backend, up_to, 2), "shm") << to_string(kind) << ": the shared buffers' row";
      }
      EXPECT_EQ(at(backend, 64 * MiB, 2), up_to == kEverySize ? "eager" : "shm") << to_string(kind);
      EXPECT_EQ(at(backend, 64 * MiB, 2, false), "shm") << to_string(kind) << ": where eager declines";
      EXPECT_EQ(at(backend, 1 * MiB, 2, false), "shm") << to_string(kind) << ": where eager declines";
      EXPECT_EQ(at(backend, 128 * KiB, 3), "eager") << to_string(kind);
      EXPECT_EQ(at(backend, 512 * KiB, 3), "shm") << to_string(kind) << ": eager past 512 KiB at two ranks only";
    }
    EXPECT_EQ(at(BackendKind::inproc, 256 * KiB, 2), "eager") << to_string(kind);
    EXPECT_NE(at(BackendKind::inproc, 1 * MiB, 2), "eager") << to_string(kind);
  }
}

TEST(SelectionTable, EagerTakesOverAllToAllsInPlaceFromShmAtTwoToFourRanks) {
  // In place its pairs of ranks swap their blocks (EagerMailbox::swap_half_with): from 512 KiB,
  // behind the shm row, which runs where every buffer is shared and hands plain ones over to it
  // (its rows before shm's hold out of place only).
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](BackendKind backend, std::size_t bytes, int ranks, bool in_place, bool shm_runs = true) {
    auto name = table.first_preferred(CollectiveKind::all_to_all, backend, bytes, ranks, true, in_place,
                                      [&](std::string_view algorithm) { return shm_runs || algorithm != "shm"; });
    return name ? std::string(*name) : std::string("(none)");
  };
  for (const auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    EXPECT_EQ(at(backend, 256 * KiB, 2, true), "eager") << to_string(backend);
    for (std::size_t bytes : {512 * KiB, 8 * MiB, 64 * MiB, std::size_t{1} << 40}) {
      EXPECT_EQ(at(backend, bytes, 2, true), "shm") << to_string(backend) << " " << bytes;
      EXPECT_EQ(at(backend, bytes, 2, true, false), "eager") << to_string(backend) << " " << bytes << " taken over";
      EXPECT_EQ(at(backend, bytes, 4, true, false), "eager") << to_string(backend) << " " << bytes << " at four";
      EXPECT_EQ(at(backend, bytes, 5, true, false), "pairwise") << to_string(backend) << " " << bytes << " at five";
    }
    EXPECT_EQ(at(backend, 512 * KiB, 2, false), "eager") << to_string(backend) << " out of place";
    EXPECT_EQ(at(backend, 8 * MiB, 2, false, false), "pairwise") << to_string(backend) << " out of place";
  }
  EXPECT_EQ(at(BackendKind::inproc, 8 * MiB, 2, true), "pairwise");
}

TEST(SelectionTable, EagerTakesBroadcastsBelow512KiBAndTwoOrFourToEightRanksPastIt) {
  // Below 512 KiB at any rank count; at two and at four to eight ranks on mpi and ucx at every
  // size, before the shm row, which takes three ranks and more than eight (and the calls eager
  // declines).
  const auto table = SelectionTable::measured_defaults();
  auto at = [&](BackendKind backend, std::size_t bytes, int ranks, bool eager_runs = true) {
    return preferred(table, CollectiveKind::broadcast, backend, bytes, ranks, eager_runs);
  };
  for (const auto backend : {BackendKind::mpi, BackendKind::ucx}) {
    EXPECT_EQ(at(backend, 512 * KiB - 4, 3), "eager") << to_string(backend);
    EXPECT_EQ(at(backend, 512 * KiB, 3), "shm") << to_string(backend);
    EXPECT_EQ(at(backend, 512 * KiB, 9), "shm") << to_string(backend);
    for (std::size_t bytes : {512 * KiB - 4, 512 * KiB, 64 * MiB, std::size_t{1} << 40}) {
      for (int ranks : {2, 4, 8}) {
        EXPECT_EQ(at(backend, bytes, ranks), "eager") << to_string(backend) << " " << bytes << " " << ranks;
      }
    }
    EXPECT_EQ(at(backend, 1 * MiB, 2, false), "shm") << to_string(backend) << ": where eager declines";
  }
  EXPECT_NE(at(BackendKind::inproc, 1 * MiB, 2), "eager");
}

TEST(SelectionTable, ForcedNamesAndTheirErrors) {
  const auto algorithms = AlgorithmList::built_in();
  auto table = SelectionTable::measured_defaults();
  table.force_from_text("all_gather:ring,reduce_scatter:native", "MESHCOMM_ALGO", algorithms);
  EXPECT_EQ(table.forced(CollectiveKind::all_gather).value_or(""), "ring");
  EXPECT_EQ(table.forced(CollectiveKind::reduce_scatter).value_or(""), "native");
  EXPECT_FALSE(table.forced(CollectiveKind::broadcast));
  try {
    table.force_from_text("all_gather:fastest", "MESHCOMM_ALGO", algorithms);
    ADD_FAILURE() << "an unknown algorithm was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
    const std::string message = error.what();
    EXPECT_NE(message.find("'fastest'"), std::string::npos) << message;
    EXPECT_NE(message.find("ring"), std::string::npos) << message;  // lists the valid ones
  }
}

}  // namespace
}  // namespace meshcomm::detail
