// The C ABI's error paths, in one process: each wrong call returns its code, leaves a message
// that names the argument, and leaves the communicator usable. The communicator comes from a
// caller's exchange of one rank; a caller's exchange that never completes times out naming the
// ranks its `missing` reports.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "meshcomm/meshcomm.h"

namespace {

// A one-rank exchange: the all-gather is a copy, complete at once.
int copy_all_gather(void* /*context*/, const void* send, void* recv, size_t bytes, void** request) {
  std::memcpy(recv, send, bytes);
  *request = recv;
  return 0;
}
int always_done(void* /*context*/, void* /*request*/) { return 1; }
int never_done(void* /*context*/, void* /*request*/) { return 0; }
void release_nothing(void* /*context*/, void* /*request*/) {}
int rank_one_missing(void* /*context*/, void* /*request*/, int* ranks, int capacity) {
  if (capacity < 1) return 0;
  ranks[0] = 1;
  return 1;
}

meshcommOob_t single_rank_oob() {
  meshcommOob_t oob = MESHCOMM_OOB_INITIALIZER;
  oob.rank = 0;
  oob.nranks = 1;
  oob.allgather = copy_all_gather;
  oob.test = always_done;
  oob.release = release_nothing;
  return oob;
}

std::string last_error(meshcommComm_t comm) { return meshcommGetLastError(comm); }

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto oob = single_rank_oob();
    ASSERT_EQ(meshcommBootstrapFromOob(&oob, &bootstrap_), meshcommSuccess) << last_error(nullptr);
    meshcommCommConfig_t config = MESHCOMM_COMM_CONFIG_INITIALIZER;
    config.timeout_ms = 10000;  // the backend stays automatic: ucx for a caller's exchange
    ASSERT_EQ(meshcommCommCreate(bootstrap_, &config, &comm_), meshcommSuccess) << last_error(nullptr);
  }
  void TearDown() override {
    EXPECT_EQ(meshcommCommDestroy(comm_), meshcommSuccess);
    EXPECT_EQ(meshcommBootstrapDestroy(bootstrap_), meshcommSuccess);
  }
  meshcommBootstrap_t bootstrap_ = nullptr;
  meshcommComm_t comm_ = nullptr;
};

TEST(CApiVersion, LibraryMatchesHeader) {
  int version = 0;
  ASSERT_EQ(meshcommGetVersion(&version), meshcommSuccess);
  EXPECT_EQ(version, MESHCOMM_VERSION_CODE);
  EXPECT_EQ(meshcommGetVersion(nullptr), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("version is NULL"), std::string::npos) << last_error(nullptr);
  EXPECT_STREQ(meshcommGetErrorString(meshcommTimeout), "timeout");
  EXPECT_STREQ(meshcommGetErrorString(static_cast<meshcommResult_t>(12)), "unknown result code");
}

TEST(CApiBootstrap, IncompleteExchangeIsRefused) {
  meshcommOob_t oob = single_rank_oob();
  oob.test = nullptr;
  meshcommBootstrap_t bootstrap = nullptr;
  EXPECT_EQ(meshcommBootstrapFromOob(&oob, &bootstrap), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("oob.test is NULL"), std::string::npos) << last_error(nullptr);
  oob = single_rank_oob();
  oob.rank = 3;
  EXPECT_EQ(meshcommBootstrapFromOob(&oob, &bootstrap), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("rank = 3 must be in [0, size = 1)"), std::string::npos) << last_error(nullptr);
}

TEST(CApiBootstrap, ExchangeThatNeverCompletesTimesOutNamingTheMissingRank) {
  meshcommOob_t oob = single_rank_oob();
  oob.nranks = 2;
  oob.test = never_done;
  oob.missing = rank_one_missing;
  oob.timeout_ms = 200;
  meshcommBootstrap_t bootstrap = nullptr;
  ASSERT_EQ(meshcommBootstrapFromOob(&oob, &bootstrap), meshcommSuccess) << last_error(nullptr);
  meshcommComm_t comm = nullptr;
  EXPECT_EQ(meshcommCommCreate(bootstrap, nullptr, &comm), meshcommTimeout);
  EXPECT_NE(last_error(nullptr).find("rank 1 never arrived"), std::string::npos) << last_error(nullptr);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(meshcommBootstrapDestroy(bootstrap), meshcommSuccess);
}

TEST_F(CApi, UninitialisedConfigIsAnErrorNotGarbage) {
  meshcommCommConfig_t config;
  std::memset(&config, 0x5a, sizeof(config));
  meshcommComm_t comm = nullptr;
  EXPECT_EQ(meshcommCommCreate(bootstrap_, &config, &comm), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("fill it with MESHCOMM_COMM_CONFIG_INITIALIZER"), std::string::npos)
      << last_error(nullptr);
  meshcommCallOptions_t options{};
  meshcommWork_t work = nullptr;
  int value = 1;
  EXPECT_EQ(meshcommAllReduce(comm_, &value, &value, 1, meshcommInt32, meshcommSum, &options, &work),
            meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("MESHCOMM_CALL_OPTIONS_INITIALIZER"), std::string::npos) << last_error(comm_);
}

TEST_F(CApi, ConfigOfAnOlderHeaderTakesDefaultsAndOneOfUnknownSizeIsRefused) {
  meshcommCallOptions_t options = MESHCOMM_CALL_OPTIONS_INITIALIZER;
  options.size = offsetof(meshcommCallOptions_t, algorithm);  // a header from before `algorithm`
  options.algorithm = "no such algorithm";                      // beyond its size: not read
  int value = 2;
  meshcommWork_t work = nullptr;
  ASSERT_EQ(meshcommAllReduce(comm_, &value, &value, 1, meshcommInt32, meshcommSum, &options, &work), meshcommSuccess)
      << last_error(comm_);
  EXPECT_EQ(meshcommWorkWait(work, 0), meshcommSuccess);
  EXPECT_EQ(meshcommWorkFree(work), meshcommSuccess);
  EXPECT_EQ(value, 2);
  options.size = sizeof(options) + 8;  // a header newer than this library
  EXPECT_EQ(meshcommAllReduce(comm_, &value, &value, 1, meshcommInt32, meshcommSum, &options, &work),
            meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("options.size"), std::string::npos) << last_error(comm_);
}

TEST_F(CApi, BadHandlesAndOutputsAreNamed) {
  int rank = -1;
  EXPECT_EQ(meshcommCommRank(nullptr, &rank), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("comm is NULL"), std::string::npos) << last_error(nullptr);
  // A handle of another kind is not a communicator.
  EXPECT_EQ(meshcommCommRank(reinterpret_cast<meshcommComm_t>(bootstrap_), &rank), meshcommInvalidArgument);
  EXPECT_NE(last_error(nullptr).find("not a live handle"), std::string::npos) << last_error(nullptr);
  EXPECT_EQ(meshcommCommRank(comm_, nullptr), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("output rank is NULL"), std::string::npos) << last_error(comm_);
  EXPECT_EQ(meshcommWorkWait(nullptr, 0), meshcommInvalidArgument);
  ASSERT_EQ(meshcommCommRank(comm_, &rank), meshcommSuccess);
  EXPECT_EQ(rank, 0);
}

TEST_F(CApi, WrongSizesAndValuesAreRefusedAndTheCommunicatorStaysUsable) {
  meshcommWork_t work = nullptr;
  float data[4] = {1, 2, 3, 4};
  EXPECT_EQ(meshcommIrecv(comm_, data, 4, meshcommFloat32, 5, 0, nullptr, &work), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("peer"), std::string::npos) << last_error(comm_);
  EXPECT_EQ(meshcommAllGather(comm_, data, data, 4, static_cast<meshcommDataType_t>(13), nullptr, &work),
            meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("type = 13"), std::string::npos) << last_error(comm_);
  EXPECT_EQ(meshcommBroadcast(comm_, data, 4, meshcommFloat32, 3, nullptr, &work), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("root"), std::string::npos) << last_error(comm_);
  void* memory = nullptr;
  EXPECT_EQ(meshcommMemAlloc(comm_, 0, &memory), meshcommInvalidArgument);
  EXPECT_EQ(meshcommMemFree(comm_, data), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("did not come from meshcommMemAlloc"), std::string::npos) << last_error(comm_);

  meshcommRingSpec_t ring_spec = MESHCOMM_RING_SPEC_INITIALIZER;  // block_bytes 0
  meshcommRing_t ring = nullptr;
  EXPECT_EQ(meshcommRingCreate(comm_, &ring_spec, &ring), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("block_bytes"), std::string::npos) << last_error(comm_);

  const size_t shard_rows[1] = {4};
  meshcommHaloSpec_t halo_spec = MESHCOMM_HALO_SPEC_INITIALIZER;
  halo_spec.shard_rows = shard_rows;
  halo_spec.left = -1;
  meshcommHaloPlan_t plan = nullptr;
  EXPECT_EQ(meshcommHaloPlanCreate(comm_, &halo_spec, &plan), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("left"), std::string::npos) << last_error(comm_);

  // Still usable: an all-to-all-v of one rank, out of shared memory.
  ASSERT_EQ(meshcommMemAlloc(comm_, 4 * sizeof(float), &memory), meshcommSuccess) << last_error(comm_);
  const size_t counts[1] = {4}, offsets[1] = {0};
  ASSERT_EQ(meshcommAllToAllv(comm_, data, counts, offsets, memory, counts, offsets, meshcommFloat32, nullptr, &work),
            meshcommSuccess)
      << last_error(comm_);
  EXPECT_EQ(meshcommWorkWait(work, 0), meshcommSuccess) << last_error(comm_);
  EXPECT_EQ(meshcommWorkFree(work), meshcommSuccess);
  EXPECT_EQ(std::memcmp(memory, data, sizeof(data)), 0);
  EXPECT_EQ(meshcommMemFree(comm_, memory), meshcommSuccess);
}

TEST_F(CApi, MeshGivesAxisCommunicatorsItOwns) {
  meshcommMesh_t mesh = nullptr;
  EXPECT_EQ(meshcommMeshCreate(comm_, "1,-1,3,1", nullptr, 0, &mesh), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("1,-1,3,1"), std::string::npos) << last_error(comm_);
  ASSERT_EQ(meshcommMeshCreate(comm_, "1,-1,1,1", "topology_aware", 0, &mesh), meshcommSuccess) << last_error(comm_);
  meshcommComm_t tp = nullptr;
  ASSERT_EQ(meshcommMeshComm(mesh, "dp,fsdp", &tp), meshcommSuccess) << last_error(comm_);
  int size = 0, coordinate = -1;
  EXPECT_EQ(meshcommCommSize(tp, &size), meshcommSuccess);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(meshcommMeshCoordinate(mesh, "tp", &coordinate), meshcommSuccess);
  EXPECT_EQ(coordinate, 0);
  EXPECT_EQ(meshcommMeshComm(mesh, "pp", &tp), meshcommInvalidArgument);
  EXPECT_NE(last_error(comm_).find("pp"), std::string::npos) << last_error(comm_);
  EXPECT_EQ(meshcommCommDestroy(tp), meshcommInvalidArgument);
  EXPECT_NE(last_error(tp).find("belongs to a mesh"), std::string::npos) << last_error(tp);
  EXPECT_EQ(meshcommMeshDestroy(mesh), meshcommSuccess);
}

TEST_F(CApi, RingOfOneRankSendsItsBlockToItself) {
  meshcommRingSpec_t spec = MESHCOMM_RING_SPEC_INITIALIZER;
  spec.block_bytes = 16;
  meshcommRing_t ring = nullptr;
  ASSERT_EQ(meshcommRingCreate(comm_, &spec, &ring), meshcommSuccess) << last_error(comm_);
  void* block = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(meshcommRingCurrent(ring, &block, &bytes), meshcommSuccess);
  ASSERT_EQ(bytes, 16u);
  std::memset(block, 7, bytes);
  meshcommWork_t work = nullptr;
  ASSERT_EQ(meshcommRingStart(ring, nullptr, &work), meshcommSuccess) << last_error(comm_);
  EXPECT_EQ(meshcommWorkWait(work, 0), meshcommSuccess) << last_error(comm_);
  EXPECT_EQ(meshcommWorkFree(work), meshcommSuccess);
  ASSERT_EQ(meshcommRingAdvance(ring, nullptr), meshcommSuccess) << last_error(comm_);
  ASSERT_EQ(meshcommRingCurrent(ring, &block, &bytes), meshcommSuccess);
  EXPECT_EQ(static_cast<unsigned char*>(block)[15], 7);
  int send_peer = -1, recv_peer = -1;
  EXPECT_EQ(meshcommRingPeers(ring, &send_peer, &recv_peer), meshcommSuccess);
  EXPECT_EQ(send_peer, 0);
  EXPECT_EQ(recv_peer, 0);
  EXPECT_EQ(meshcommRingDestroy(ring), meshcommSuccess);
}

}  // namespace
