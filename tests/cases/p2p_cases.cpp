#include "p2p_cases.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "harness/expect_error.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {

namespace {

using namespace std::chrono_literals;

std::vector<std::int32_t> stamped(int rank, int tag, std::size_t count) {
  std::vector<std::int32_t> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = rank * 1'000'000 + tag * 10'000 + static_cast<int>(i);
  return values;
}

int right_of(const Communicator& comm) { return (comm.rank() + 1) % comm.size(); }
int left_of(const Communicator& comm) { return (comm.rank() - 1 + comm.size()) % comm.size(); }

}  // namespace

void check_ring_exchange(Communicator& comm) {
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{100'003}}) {
    auto outgoing = stamped(comm.rank(), 5, count);
    std::vector<std::int32_t> incoming(count, -1);
    auto receive = comm.irecv(incoming, left_of(comm), 5);
    auto send = comm.isend(outgoing, right_of(comm), 5);
    send.wait();
    receive.wait();
    EXPECT_EQ(incoming, stamped(left_of(comm), 5, count)) << "count " << count;
  }
}

void check_out_of_order_tags(Communicator& comm) {
  std::vector<std::vector<std::int32_t>> outgoing;
  std::vector<Work> sends;
  for (int tag = 1; tag <= 3; ++tag) outgoing.push_back(stamped(comm.rank(), tag, 10 + tag));
  for (int tag = 1; tag <= 3; ++tag) sends.push_back(comm.isend(outgoing[tag - 1], right_of(comm), tag));
  for (int tag = 3; tag >= 1; --tag) {
    std::vector<std::int32_t> incoming(10 + tag);
    comm.irecv(incoming, left_of(comm), tag).wait();
    EXPECT_EQ(incoming, stamped(left_of(comm), tag, 10 + tag)) << "tag " << tag;
  }
  for (auto& send : sends) send.wait();
}

void check_same_tag_order(Communicator& comm) {
  constexpr int kMessages = 5;
  std::vector<std::vector<std::int32_t>> outgoing;
  std::vector<std::vector<std::int32_t>> incoming(kMessages, std::vector<std::int32_t>(3));
  std::vector<Work> works;
  for (int i = 0; i < kMessages; ++i) outgoing.push_back(stamped(comm.rank(), i, 3));
  for (int i = 0; i < kMessages; ++i) works.push_back(comm.irecv(incoming[i], left_of(comm), 9));
  for (int i = 0; i < kMessages; ++i) works.push_back(comm.isend(outgoing[i], right_of(comm), 9));
  for (auto& work : works) work.wait();
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(incoming[i], stamped(left_of(comm), i, 3)) << "message " << i;
}

void check_one_way_large_messages(Communicator& comm) {
  // On ucx these go by descriptor: the burst's descriptors wait unexpected until the receives
  // come, and every message must still land whole, in the order it was sent.
  constexpr int kBurst = 4;
  constexpr std::size_t kCount = 100'003;
  if (comm.size() < 2) return;
  if (comm.rank() == 0) {
    std::vector<std::vector<std::int32_t>> outgoing;
    std::vector<Work> sends;
    for (int i = 0; i < kBurst; ++i) outgoing.push_back(stamped(0, i, kCount));
    for (int i = 0; i < kBurst; ++i) sends.push_back(comm.isend(outgoing[i], 1, 21));
    for (auto& send : sends) send.wait();
  } else if (comm.rank() == 1) {
    std::this_thread::sleep_for(20ms);  // the descriptors wait unexpected
    std::vector<std::vector<std::int32_t>> incoming(kBurst, std::vector<std::int32_t>(kCount, -1));
    std::vector<Work> receives;
    for (int i = 0; i < kBurst; ++i) receives.push_back(comm.irecv(incoming[i], 0, 21));
    for (auto& receive : receives) receive.wait();
    for (int i = 0; i < kBurst; ++i) EXPECT_EQ(incoming[i], stamped(0, i, kCount)) << "message " << i;
  }
  for (int round = 0; comm.rank() < 2 && round < 6; ++round) {
    const int peer = 1 - comm.rank();
    const bool serves = (round + comm.rank()) % 2 == 0;
    if (serves) {
      const auto outgoing = stamped(comm.rank(), round, kCount);
      comm.isend(outgoing, peer, 22).wait();
    } else {
      std::vector<std::int32_t> incoming(kCount, -1);
      comm.irecv(incoming, peer, 22).wait();
      EXPECT_EQ(incoming, stamped(peer, round, kCount)) << "round " << round;
    }
  }
  comm.barrier();
}

void check_exchange_behind_the_peer(Communicator& comm) {
  constexpr std::size_t kCount = 300'007;
  constexpr int kRounds = 4;
  constexpr int kTag = 26;
  for (int round = 0; comm.size() >= 2 && comm.rank() < 2 && round < kRounds; ++round) {
    const int peer = 1 - comm.rank();
    const auto outgoing = stamped(comm.rank(), round, kCount);
    std::vector<std::int32_t> incoming(kCount, -1);
    if (comm.rank() == 1) {
      auto sent = comm.isend(outgoing, peer, kTag);
      auto received = comm.irecv(incoming, peer, kTag);
      sent.wait();
      received.wait();
    } else {
      std::this_thread::sleep_for(10ms);  // the peer's message comes before the receive
      auto received = comm.irecv(incoming, peer, kTag);
      auto sent = comm.isend(outgoing, peer, kTag);
      received.wait();
      sent.wait();
    }
    EXPECT_EQ(incoming, stamped(peer, round, kCount)) << "round " << round;
  }
  comm.barrier();
}

namespace {

/// Rank 0 sends rank 1 two messages of `count` values on one tag: one while it has a large
/// receive from rank 1 posted (on ucx: by descriptor) and one while it has none (eagerly), in the
/// order `announced_first` says. Rank 1 posts both receives only once both are on their way.
void send_both_ways_on_one_tag(Communicator& comm, std::size_t count, bool announced_first) {
  constexpr int kTag = 23, kReplyTag = 24, kGoTag = 25;
  if (comm.rank() == 0) {
    const auto first = stamped(0, 1, count);
    const auto second = stamped(0, 2, count);
    std::vector<std::int32_t> reply(count, -1);
    const int go = 1;
    Work first_sent, second_sent;
    if (announced_first) {
      auto reply_received = comm.irecv(reply, 1, kReplyTag);
      first_sent = comm.isend(first, 1, kTag);
      comm.isend(std::span(&go, 1), 1, kGoTag).wait();
      reply_received.wait();
      second_sent = comm.isend(second, 1, kTag);
    } else {
      first_sent = comm.isend(first, 1, kTag);
      auto reply_received = comm.irecv(reply, 1, kReplyTag);
      second_sent = comm.isend(second, 1, kTag);
      comm.isend(std::span(&go, 1), 1, kGoTag).wait();
      reply_received.wait();
    }
    first_sent.wait();
    second_sent.wait();
    EXPECT_EQ(reply, stamped(1, 3, count)) << "count " << count;
  } else if (comm.rank() == 1) {
    int go = 0;
    comm.irecv(std::span(&go, 1), 0, kGoTag).wait();
    const auto reply = stamped(1, 3, count);
    comm.isend(reply, 0, kReplyTag).wait();
    std::this_thread::sleep_for(20ms);  // both messages wait unexpected
    std::vector<std::int32_t> first(count, -1), second(count, -1);
    auto first_received = comm.irecv(first, 0, kTag);
    auto second_received = comm.irecv(second, 0, kTag);
    first_received.wait();
    second_received.wait();
    EXPECT_EQ(first, stamped(0, 1, count)) << "count " << count << ", announced first " << announced_first;
    EXPECT_EQ(second, stamped(0, 2, count)) << "count " << count << ", announced first " << announced_first;
  }
}

}  // namespace

void check_mid_sized_messages(Communicator& comm) {
  // 32 KiB, 48 KiB + 4, 96 KiB, 128 KiB - 4.
  for (std::size_t count : {std::size_t{8'192}, std::size_t{12'289}, std::size_t{24'576}, std::size_t{32'767}}) {
    auto outgoing = stamped(comm.rank(), 6, count);
    std::vector<std::int32_t> incoming(count, -1);
    auto receive = comm.irecv(incoming, left_of(comm), 6);
    comm.isend(outgoing, right_of(comm), 6).wait();
    receive.wait();
    EXPECT_EQ(incoming, stamped(left_of(comm), 6, count)) << "count " << count;
    if (comm.size() < 2) continue;
    send_both_ways_on_one_tag(comm, count, true);
    send_both_ways_on_one_tag(comm, count, false);
    comm.barrier();
  }
}

void check_waits_progress_other_operations(Communicator& comm) {
  constexpr std::size_t kCount = 1'000'003;  // past every backend's eager limit
  const int small = comm.rank() + 1;
  int sum = 0;
  const int expected = comm.size() * (comm.size() + 1) / 2;
  if (comm.size() < 2) return;
  if (comm.rank() == 0) {
    const auto outgoing = stamped(0, 31, kCount);
    comm.isend(outgoing, 1, 31).wait(20s);
    comm.all_reduce(ConstBufferView(&small, 1, DataType::i32), BufferView(&sum, 1, DataType::i32)).wait(20s);
  } else if (comm.rank() == 1) {
    std::vector<std::int32_t> incoming(kCount, -1);
    auto receive = comm.irecv(incoming, 0, 31);
    comm.all_reduce(ConstBufferView(&small, 1, DataType::i32), BufferView(&sum, 1, DataType::i32)).wait(20s);
    receive.wait(20s);
    EXPECT_EQ(incoming, stamped(0, 31, kCount));
  } else {
    comm.all_reduce(ConstBufferView(&small, 1, DataType::i32), BufferView(&sum, 1, DataType::i32)).wait(20s);
  }
  EXPECT_EQ(sum, expected);
  comm.barrier();
}

void check_zero_size_messages(Communicator& comm) {
  std::vector<float> empty;
  auto receive_null = comm.irecv(BufferView(nullptr, 0, DataType::f32), left_of(comm), 11);
  auto send_null = comm.isend(ConstBufferView(nullptr, 0, DataType::f32), right_of(comm), 11);
  auto receive_empty = comm.irecv(empty, left_of(comm), 12);
  auto send_empty = comm.isend(empty, right_of(comm), 12);
  send_null.wait();
  receive_null.wait();
  send_empty.wait();
  receive_empty.wait();
  EXPECT_TRUE(receive_null.test());
}

void check_split(Communicator& comm) {
  const int color = comm.rank() % 2;
  auto half = comm.split(color, -comm.rank());
  std::vector<int> expected;  // old ranks of this color, highest first (keys are reversed)
  for (int rank = comm.size() - 1; rank >= 0; --rank) {
    if (rank % 2 == color) expected.push_back(rank);
  }
  ASSERT_EQ(half.size(), static_cast<int>(expected.size()));
  EXPECT_EQ(expected[half.rank()], comm.rank());
  std::vector<int> root_ranks(half.root_ranks().begin(), half.root_ranks().end());
  std::vector<int> expected_roots;
  for (int old_rank : expected) expected_roots.push_back(comm.root_ranks()[old_rank]);
  EXPECT_EQ(root_ranks, expected_roots);

  // Messages inside the split reach the right members and do not mix with the parent's.
  check_ring_exchange(half);
  half.barrier();
  auto nested = half.split(0, half.rank());
  EXPECT_EQ(nested.size(), half.size());
  nested.barrier();
  comm.barrier();
}

void check_receive_timeout(Communicator& comm) {
  // Small messages, and large ones (on ucx they go by descriptor, in one copy).
  for (std::size_t count : {std::size_t{4}, std::size_t{100'000}}) {
    if (comm.rank() == 0) {
      const int silent_peer = comm.size() - 1;
      std::vector<std::int32_t> incoming(count);
      auto work = comm.irecv(incoming, silent_peer, 99);
      const auto started = std::chrono::steady_clock::now();
      auto error = expect_error([&] { work.wait(300ms); });
      const auto waited = std::chrono::steady_clock::now() - started;
      EXPECT_EQ(error.code(), ErrorCode::timeout);
      EXPECT_EQ(error.context().peer, silent_peer);
      EXPECT_NE(std::string(error.what()).find("peer " + std::to_string(silent_peer)), std::string::npos)
          << error.what();
      // Never early. How late is load, not correctness: a wait that never ends fails by ctest's timeout.
      EXPECT_GE(waited, 300ms);
      // The receive was withdrawn, so a later message with the same tag goes to a new receive.
      EXPECT_THROW(work.wait(10ms), Error);
    }
    // Post the next receive before the barrier, so that a one-rank world can send to itself.
    std::vector<std::int32_t> incoming(count);
    Work receive;
    if (comm.rank() == 0) receive = comm.irecv(incoming, comm.size() - 1, 99);
    comm.barrier();
    if (comm.rank() == comm.size() - 1) {
      std::vector<std::int32_t> late = stamped(comm.rank(), 99, count);
      comm.isend(late, 0, 99).wait();
    }
    if (comm.rank() == 0) {
      receive.wait();
      EXPECT_EQ(incoming, stamped(comm.size() - 1, 99, count)) << "count " << count;
    }
    comm.barrier();
  }
}

void check_argument_errors(Communicator& comm) {
  std::vector<float> data(4);
  auto bad_peer = expect_error([&] { (void)comm.isend(data, comm.size(), 1); });
  EXPECT_EQ(bad_peer.code(), ErrorCode::invalid_argument);
  EXPECT_NE(std::string(bad_peer.what()).find("peer = " + std::to_string(comm.size())), std::string::npos)
      << bad_peer.what();
  auto negative_peer = expect_error([&] { (void)comm.irecv(data, -1, 1); });
  EXPECT_NE(std::string(negative_peer.what()).find("valid peers are 0.."), std::string::npos);
  auto bad_tag = expect_error([&] { (void)comm.isend(data, 0, -3); });
  EXPECT_NE(std::string(bad_tag.what()).find("tag = -3"), std::string::npos) << bad_tag.what();
  auto big_tag = expect_error([&] { (void)comm.isend(data, 0, comm.max_tag() + 1 < 0 ? -1 : comm.max_tag() + 1); });
  EXPECT_EQ(big_tag.code(), ErrorCode::invalid_argument);
  auto null_data = expect_error([&] { (void)comm.isend(ConstBufferView(nullptr, 3, DataType::f32), 0, 1); });
  EXPECT_NE(std::string(null_data.what()).find("null pointer"), std::string::npos) << null_data.what();
  auto device_data = expect_error([&] { (void)comm.isend(ConstBufferView(data.data(), 4, DataType::f32, MemoryKind::cuda), 0, 1); });
  // Refused by a host-only backend, or (with CUDA) because the pointer is not device memory.
  EXPECT_TRUE(device_data.code() == ErrorCode::unsupported || device_data.code() == ErrorCode::invalid_argument)
      << device_data.what();
  EXPECT_NE(std::string(device_data.what()).find("cuda memory"), std::string::npos) << device_data.what();
  // 2^62 f32 elements are 2^64 bytes, which wrap to 0: refused before anything is sent.
  auto wrapping = expect_error([&] { (void)comm.isend(ConstBufferView(data.data(), std::size_t{1} << 62, DataType::f32), 0, 1); });
  EXPECT_EQ(wrapping.code(), ErrorCode::invalid_argument);
  EXPECT_NE(std::string(wrapping.what()).find("data.count = 4611686018427387904 elements of f32"), std::string::npos)
      << wrapping.what();
  auto negative_wait = expect_error([&] {
    std::vector<float> incoming(4);
    auto receive = comm.irecv(incoming, comm.rank(), 2);
    comm.isend(data, comm.rank(), 2).wait();
    try {
      receive.wait(std::chrono::milliseconds(-5));
    } catch (const Error&) {
      receive.wait();  // still pending, and completes
      throw;
    }
  });
  EXPECT_NE(std::string(negative_wait.what()).find("timeout = -5 ms"), std::string::npos) << negative_wait.what();
  auto bad_color = expect_error([&] { (void)comm.split(-2, 0); });
  EXPECT_NE(std::string(bad_color.what()).find("color = -2"), std::string::npos) << bad_color.what();
  // Still usable.
  check_ring_exchange(comm);
}

void check_size_mismatch(Communicator& comm) {
  if (comm.size() < 2) return;
  const int last = comm.size() - 1;
  // Small messages, and large ones of different sizes (on ucx both go by descriptor: each side
  // learns the other's size). Not the large ones on mpi: Open MPI 4.1's shared-memory transport
  // crashes both processes when a message it moves by CMA is truncated (docs/errors.md).
  std::vector<std::pair<std::size_t, std::size_t>> sizes{{4, 3}};
  if (comm.backend() != BackendKind::mpi) {
    sizes.emplace_back(100'000, 90'000);
    // Mid-sized ones that ucx sends eagerly into a receive that takes a descriptor too: longer
    // than the receive, then shorter.
    sizes.emplace_back(12'000, 10'000);
    sizes.emplace_back(10'000, 12'000);
  }
  for (auto [sent, posted] : sizes) {
    if (comm.rank() == 0) {
      std::vector<std::int32_t> outgoing(sent, 7);
      auto send = comm.isend(outgoing, last, 21);
      try {
        send.wait();  // MPI may complete the send; inproc and ucx's descriptors fail it too
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::size_mismatch) << error.what();
      }
    } else if (comm.rank() == last) {
      std::vector<std::int32_t> incoming(posted);
      auto error = expect_error([&] { comm.irecv(incoming, 0, 21).wait(); });
      EXPECT_EQ(error.code(), ErrorCode::size_mismatch) << error.what();
      EXPECT_NE(std::string(error.what()).find("size mismatch"), std::string::npos) << error.what();
    }
    comm.barrier();
  }
  // A message shorter than the receive, there before the receive is posted (on ucx, UCX then
  // completes the receive inside the call): the receive fails too, naming both sizes.
  std::vector<std::int32_t> outgoing(3, 7);
  Work send;
  if (comm.rank() == 0) send = comm.isend(outgoing, last, 22);
  comm.barrier();
  if (comm.rank() == last) {
    std::vector<std::int32_t> incoming(4);
    auto error = expect_error([&] { comm.irecv(incoming, 0, 22).wait(); });
    EXPECT_EQ(error.code(), ErrorCode::size_mismatch) << error.what();
    EXPECT_NE(std::string(error.what()).find("12 bytes"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("16 bytes"), std::string::npos) << error.what();
  }
  if (comm.rank() == 0) {
    try {
      send.wait();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::size_mismatch) << error.what();
    }
  }
  comm.barrier();
}

}  // namespace meshcomm::testing
