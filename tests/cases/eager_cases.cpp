#include "eager_cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness/expect_error.hpp"
#include "verifiable/verifiable.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {

namespace {

constexpr int kOperations = 3 * kEagerHeaders;
constexpr std::size_t kCount = 4;       // 32 bytes of doubles: a payload that fits its header
constexpr std::size_t kWideCount = 16;  // 128 bytes: one in its header's share of the payload bytes
// Past a share: one in the slot's whole payload bytes.
constexpr std::size_t kWholeCount = kEagerPayloadShareBytes / sizeof(double) + 1;

/// One call's type and count.
struct CallShape {
  DataType type;
  std::size_t count;
};

/// Broadcasts each of `cases` twice through the eager path, from the first rank and then from the
/// last, into the buffer `buffer_for(call, root, bytes)` gives (alive until the end), each followed
/// by a small eager all-reduce; every call is started before any is waited for, one rank late, and
/// waited for newest first. Every result must be exact.
template <class BufferFor>
void check_broadcasts_between_all_reduces(Communicator& comm, std::span<const CallShape> cases,
                                          BufferFor buffer_for) {
  const int rank = comm.rank();
  const int size = comm.size();
  std::vector<std::byte*> buffers;
  std::vector<double> sums(cases.size() * 2);
  const double one = rank + 1.0;  // every all-reduce's input, alive until every call is waited for
  std::vector<Work> works;
  if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (std::size_t call = 0; call < cases.size() * 2; ++call) {
    const auto& each = cases[call / 2];
    const int root = call % 2 == 0 ? 0 : size - 1;
    buffers.push_back(buffer_for(call, root, each.count * size_of(each.type)));
    verifiable::fill(buffers.back(), 0, each.count, each.type, [&](std::size_t i) {
      return rank == root ? verifiable::payload(root, static_cast<int>(call), i) : -1.0;
    });
    works.push_back(comm.broadcast(BufferView(buffers.back(), each.count, each.type),
                                   {.root = root, .algorithm = "eager"}));
    works.push_back(comm.all_reduce(std::span<const double>(&one, 1), std::span<double>(&sums[call], 1),
                                    {.algorithm = "eager"}));
  }
  for (auto work = works.rbegin(); work != works.rend(); ++work) work->wait(std::chrono::seconds(20));
  for (std::size_t call = 0; call < cases.size() * 2; ++call) {
    const auto& each = cases[call / 2];
    const int root = call % 2 == 0 ? 0 : size - 1;
    auto expected = [&](std::size_t i) { return verifiable::payload(root, static_cast<int>(call), i); };
    EXPECT_EQ(verifiable::count_wrong(buffers[call], 0, each.count, each.type, expected), 0U)
        << "broadcast " << call << " of " << each.count << " " << to_string(each.type) << " from rank " << root
        << " on rank " << rank;
    EXPECT_EQ(sums[call], size * (size + 1) / 2.0) << "all_reduce after broadcast " << call;
  }
}

/// Expects `call`, an eager `operation` ("eager broadcast") that waits 300 ms for peers that never
/// come, to time out naming one of them and the operation.
template <class Call>
void expect_eager_timeout(Call call, std::string_view operation) {
  const auto error = expect_error([&] { call().wait(std::chrono::milliseconds(300)); });
  EXPECT_EQ(error.code(), ErrorCode::timeout) << error.what();
  EXPECT_GE(error.context().peer, 1) << error.what();
  EXPECT_NE(std::string(error.what()).find(operation), std::string::npos) << error.what();
}

}  // namespace

void check_eager_calls_run_ahead(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());
  const int size = comm.size();
  const int rank = comm.rank();
  // Operation i alternates all_reduce (sum of (rank+1)*(i+1)+e), all_gather and broadcast from
  // rank i % size, of kWholeCount elements every seventh one, kWideCount every fifth, else kCount;
  // every value is a small integer, exact in double.
  std::vector<std::vector<double>> inputs(kOperations), outputs(kOperations);
  std::vector<Work> works;
  if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (int i = 0; i < kOperations; ++i) {
    auto& input = inputs[i];
    auto& output = outputs[i];
    const std::size_t count = i % 7 == 6 ? kWholeCount : i % 5 == 4 ? kWideCount : kCount;
    for (std::size_t e = 0; e < count; ++e) input.push_back((rank + 1.0) * (i + 1.0) + static_cast<double>(e));
    switch (i % 3) {
      case 0:
        output.assign(count, -1.0);
        works.push_back(comm.all_reduce(std::span<const double>(input), std::span<double>(output),
                                        {.algorithm = "eager"}));
        break;
      case 1:
        output.assign(count * static_cast<std::size_t>(size), -1.0);
        works.push_back(comm.all_gather(std::span<const double>(input), std::span<double>(output),
                                        {.algorithm = "eager"}));
        break;
      default:
        output = input;
        works.push_back(comm.broadcast(std::span<double>(output), {.root = i % size, .algorithm = "eager"}));
    }
  }
  for (int i = kOperations - 1; i >= 0; --i) works[i].wait(std::chrono::seconds(20));
  for (int i = 0; i < kOperations; ++i) {
    for (std::size_t e = 0; e < outputs[i].size(); ++e) {
      double expected = 0;
      const std::size_t count = inputs[i].size();
      const auto at = e % count;
      if (i % 3 == 0) {
        for (int r = 0; r < size; ++r) expected += (r + 1.0) * (i + 1.0) + static_cast<double>(at);
      } else {
        const int from = i % 3 == 1 ? static_cast<int>(e / count) : i % size;
        expected = (from + 1.0) * (i + 1.0) + static_cast<double>(at);
      }
      ASSERT_EQ(outputs[i][e], expected) << "operation " << i << " element " << e << " on rank " << rank;
    }
  }
  world.barrier();
}

void check_eager_broadcasts_store_both_ways(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());  // a mailbox of its own: its choices start afresh
  const int size = comm.size();
  const int rank = comm.rank();
  // Enough calls per class and root for the warm-up, a change of way and its lag (about 20).
  constexpr int kCalls = 40;
  for (std::size_t bytes : {std::size_t{16} * 1024, std::size_t{40000}, std::size_t{64} * 1024}) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count);
    for (int root : {0, size - 1}) {
      for (int call = 0; call < kCalls; ++call) {
        verifiable::fill(data.data(), 0, count, DataType::f32, [&](std::size_t i) {
          return rank == root ? verifiable::payload(root, call, i) : -1.0;
        });
        comm.broadcast(std::span<float>(data), {.root = root, .algorithm = "eager"}).wait(std::chrono::seconds(20));
        ASSERT_EQ(verifiable::count_wrong(data.data(), 0, count, DataType::f32,
                                          [&](std::size_t i) { return verifiable::payload(root, call, i); }),
                  0U)
            << "broadcast of " << bytes << " bytes from " << root << ", call " << call;
      }
    }
  }
}

void check_eager_broadcasts_in_pieces(Communicator& world) {
  if (world.size() < 2) return;
  const int rank = world.rank();
  {
    auto comm = world.split(0, rank);
    // Two whole pieces of 64 KiB; a piece and one element; three pieces and 7 bytes.
    const std::array cases{CallShape{DataType::f32, 2 * 16384}, CallShape{DataType::f64, 8192 + 1},
                           CallShape{DataType::u8, 3 * 65536 + 7}, CallShape{DataType::bf16, 5 * 32768}};
    std::vector<std::vector<std::byte>> data;
    check_broadcasts_between_all_reduces(comm, cases, [&](std::size_t /*call*/, int /*root*/, std::size_t bytes) {
      return data.emplace_back(bytes).data();
    });
    world.barrier();
  }
  {
    // Rank 0, the root, broadcasts 100 KiB (two pieces), the others 200 KiB (four). Each reader
    // compares the root's record with its own; the root, which waits for no reader, completes.
    auto comm = world.split(0, rank);
    std::vector<float> data(rank == 0 ? 25600 : 51200, 1.0F);
    auto call = [&] { comm.broadcast(std::span<float>(data), {.algorithm = "eager"}).wait(std::chrono::seconds(20)); };
    if (rank == 0) {
      call();
    } else {
      const auto error = expect_error(call);
      const std::string what = error.what();
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << what;
      EXPECT_EQ(error.context().peer, 0) << what;
      EXPECT_NE(what.find("broadcast count=25600"), std::string::npos) << what;
      EXPECT_NE(what.find("broadcast count=51200"), std::string::npos) << what;
    }
    world.barrier();
  }
  {
    auto comm = world.split(0, rank);
    if (rank == 0) {
      // Three pieces (of 16384 floats) more than the slots: those three wait for a slot.
      std::vector<float> data((kEagerSlots + 2) * std::size_t{16384} + 1000, 1.0F);
      expect_eager_timeout([&] { return comm.broadcast(std::span<float>(data), {.algorithm = "eager"}); },
                           "eager broadcast");
    }
    world.barrier();
  }
}

void check_eager_all_reduces_in_pieces(Communicator& world) {
  if (world.size() < 2) return;
  const int rank = world.rank();
  {
    auto comm = world.split(0, rank);
    const int size = comm.size();
    // Two whole pieces of 64 KiB; a piece and one element; three pieces and 7 bytes; five pieces.
    const std::array cases{CallShape{DataType::f32, 2 * 16384}, CallShape{DataType::f64, 8192 + 1},
                           CallShape{DataType::u8, 3 * 65536 + 7}, CallShape{DataType::bf16, 5 * 32768}};
    struct Call {
      CallShape shape;
      ReduceOp op;
      bool in_place;
      std::vector<std::byte> input;
      std::vector<std::byte> output;
    };
    std::vector<Call> calls;
    for (const auto& shape : cases) {
      for (auto op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
        for (bool in_place : {false, true}) {
          const std::size_t bytes = shape.count * size_of(shape.type);
          auto& call = calls.emplace_back(Call{shape, op, in_place, std::vector<std::byte>(bytes),
                                               std::vector<std::byte>(in_place ? 0 : bytes)});
          verifiable::fill_contributions(call.input.data(), shape.count, shape.type, op, rank, size);
        }
      }
    }
    std::vector<Work> works;
    if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (auto& call : calls) {
      std::byte* result = call.in_place ? call.input.data() : call.output.data();
      works.push_back(comm.all_reduce(ConstBufferView(call.input.data(), call.shape.count, call.shape.type),
                                      BufferView(result, call.shape.count, call.shape.type),
                                      {.op = call.op, .algorithm = "eager"}));
    }
    for (auto work = works.rbegin(); work != works.rend(); ++work) work->wait(std::chrono::seconds(20));
    for (const auto& call : calls) {
      const std::byte* result = call.in_place ? call.input.data() : call.output.data();
      auto expected = [&](std::size_t i) { return verifiable::reduced(call.op, i, size); };
      EXPECT_EQ(verifiable::count_wrong(result, 0, call.shape.count, call.shape.type, expected), 0U)
          << "all_reduce " << to_string(call.op) << " of " << call.shape.count << " "
          << to_string(call.shape.type) << (call.in_place ? " in place" : " out of place") << " on rank " << rank;
    }
    world.barrier();
  }
  {
    // Rank 0 reduces 100 KiB (two pieces), the others 200 KiB (four): every rank compares every
    // peer's record with its own at the first piece, and fails naming the first that differs.
    auto comm = world.split(0, rank);
    std::vector<float> data(rank == 0 ? 25600 : 51200, 1.0F);
    const auto error = expect_error([&] {
      comm.all_reduce(std::span<const float>(data), std::span<float>(data), {.algorithm = "eager"})
          .wait(std::chrono::seconds(20));
    });
    const std::string what = error.what();
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << what;
    EXPECT_EQ(error.context().peer, rank == 0 ? 1 : 0) << what;
    EXPECT_NE(what.find("all_reduce count=25600"), std::string::npos) << what;
    EXPECT_NE(what.find("all_reduce count=51200"), std::string::npos) << what;
    world.barrier();
  }
  {
    auto comm = world.split(0, rank);
    if (rank == 0) {
      std::vector<float> input(100000, 1.0F), output(100000);  // seven pieces: three wait for a slot
      expect_eager_timeout(
          [&] {
            return comm.all_reduce(std::span<const float>(input), std::span<float>(output), {.algorithm = "eager"});
          },
          "eager all_reduce");
    }
    world.barrier();
  }
}

void check_eager_broadcasts_of_shared_buffers(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());
  const int rank = comm.rank();
  // Three pieces and 7 bytes; five whole pieces; 5 bytes short of 512 KiB, from which a root lends
  // where the ranks share cores; twenty pieces and three elements (more than the slots).
  const std::array cases{CallShape{DataType::u8, 3 * 65536 + 7}, CallShape{DataType::f32, 5 * 16384},
                         CallShape{DataType::u8, 8 * 65536 - 5}, CallShape{DataType::f64, 20 * 8192 + 3}};
  std::vector<SharedBuffer> shared;
  std::vector<std::vector<std::byte>> plain;
  check_broadcasts_between_all_reduces(comm, cases, [&](std::size_t call, int root, std::size_t bytes) {
    // Shared on every rank, then on the root alone, on the readers alone, on none, by turns.
    const bool root_shared = call % 4 < 2;
    const bool readers_shared = call % 4 == 0 || call % 4 == 2;
    if (rank == root ? root_shared : readers_shared) {
      return static_cast<std::byte*>(shared.emplace_back(comm.allocate_shared(bytes)).data());
    }
    return plain.emplace_back(bytes).data();
  });
  world.barrier();
}

void check_eager_broadcasts_of_data_at_rest(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());
  const int size = comm.size();
  const int rank = comm.rank();
  // Unchanged past the slots (each slot then holds the call's payload), then changed at its end,
  // in a middle block and at its start, then as it first was, after an all-reduce, after a
  // barrier, then from an allocate_shared buffer of the root's through every slot (lent to the
  // readers from 32 KiB, the slots' payloads left as they were but their ends), then again from
  // the plain buffer.
  constexpr int kChangedEnd = kEagerSlots + 2;
  constexpr int kLentFrom = kChangedEnd + 7;
  constexpr int kCalls = kLentFrom + kEagerSlots + 2;
  // 1000 B; 16 KiB; one slot's 64 KiB; three slots' payloads and 12 bytes, in four pieces.
  for (std::size_t count : {std::size_t{250}, std::size_t{4096}, std::size_t{16384}, std::size_t{49155}}) {
    for (int root : {0, size - 1}) {
      std::vector<float> original(count);
      for (std::size_t i = 0; i < count; ++i) original[i] = static_cast<float>(verifiable::payload(root, 0, i));
      std::vector<float> sent = original;  // what the root sends, alike on every rank
      std::vector<float> data(count);
      SharedBuffer shared = rank == root ? comm.allocate_shared(count * sizeof(float)) : SharedBuffer{};
      for (int call = 0; call < kCalls; ++call) {
        if (call == kChangedEnd) sent.back() += 1.0F;
        if (call == kChangedEnd + 2) sent[std::min(count - 1, std::size_t{1500})] += 1.0F;  // the second 4 KiB block
        if (call == kChangedEnd + 3) sent.front() += 1.0F;
        if (call == kChangedEnd + 4) sent = original;
        if (call == kChangedEnd + 5) {
          // An 8 KiB all-reduce's payload goes into the slot the next broadcast uses (or one of them).
          std::vector<float> ones(2048, 1.0F), sums(2048);
          comm.all_reduce(std::span<const float>(ones), std::span<float>(sums), {.algorithm = "eager"})
              .wait(std::chrono::seconds(20));
          ASSERT_EQ(sums, std::vector<float>(2048, static_cast<float>(size)));
        }
        if (call == kChangedEnd + 6) comm.barrier();  // its record alone, in the slot's first line
        const bool lent = rank == root && call >= kLentFrom && call < kLentFrom + kEagerSlots;
        std::span<float> buffer(data);
        if (lent) buffer = shared.as<float>().first(count);
        if (rank == root) {
          std::copy(sent.begin(), sent.end(), buffer.begin());
        } else {
          std::fill(buffer.begin(), buffer.end(), -1.0F);
        }
        comm.broadcast(buffer, {.root = root, .algorithm = "eager"}).wait(std::chrono::seconds(20));
        ASSERT_TRUE(std::equal(buffer.begin(), buffer.end(), sent.begin(), sent.end()))
            << "broadcast of " << count << " floats from " << root << ", call " << call << ", on rank " << rank;
      }
    }
  }
}

void check_eager_copies_store_both_ways(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());  // a mailbox of its own: its choices start afresh
  const int size = comm.size();
  const int rank = comm.rank();
  const auto ranks = static_cast<std::size_t>(size);
  // Enough calls per kind, class and placement for the 128 plain ones before streaming stores
  // are first tried (EagerStoreChoice), the change of way and its lag.
  constexpr int kCalls = 160;
  // Floats each rank publishes: 16 KiB, a size in the 32 KiB class, and 64 KiB.
  for (std::size_t published : {std::size_t{4096}, std::size_t{10000}, std::size_t{16384}}) {
    for (bool in_place : {false, true}) {
      const std::size_t block = published;  // all-gather: each rank's block is its payload
      std::vector<float> input(block), gathered(block * ranks);
      for (int call = 0; call < kCalls; ++call) {
        auto value = [&](int from, std::size_t i) { return verifiable::payload(from, call, i); };
        std::fill(gathered.begin(), gathered.end(), -1.0F);
        float* mine = in_place ? gathered.data() + static_cast<std::size_t>(rank) * block : input.data();
        verifiable::fill(mine, 0, block, DataType::f32, [&](std::size_t i) { return value(rank, i); });
        comm.all_gather(std::span<const float>(mine, block), std::span<float>(gathered), {.algorithm = "eager"})
            .wait(std::chrono::seconds(20));
        ASSERT_EQ(verifiable::count_wrong(gathered.data(), 0, gathered.size(), DataType::f32,
                                          [&](std::size_t i) { return value(static_cast<int>(i / block), i % block); }),
                  0U)
            << "all_gather of " << block << " floats per rank, in place " << in_place << ", call " << call;
      }
      // All-to-all: the payload is the whole input, so its blocks are a size-th of it (rounded up
      // to keep 16 KiB in its class, down to keep 64 KiB within the slot).
      const std::size_t piece = published / ranks + (published / ranks * ranks < 4096 ? 1 : 0);
      std::vector<float> sent(piece * ranks), received(piece * ranks);
      for (int call = 0; call < kCalls; ++call) {
        // Element i of the block rank `from` sends rank `to`.
        auto value = [&](int from, int to, std::size_t i) { return verifiable::payload(from, call * size + to, i); };
        verifiable::fill(sent.data(), 0, sent.size(), DataType::f32,
                         [&](std::size_t i) { return value(rank, static_cast<int>(i / piece), i % piece); });
        std::fill(received.begin(), received.end(), -1.0F);
        auto& output = in_place ? sent : received;
        comm.all_to_all(std::span<const float>(sent), std::span<float>(output), {.algorithm = "eager"})
            .wait(std::chrono::seconds(20));
        auto expected = [&](std::size_t i) { return value(static_cast<int>(i / piece), rank, i % piece); };
        ASSERT_EQ(verifiable::count_wrong(output.data(), 0, output.size(), DataType::f32, expected), 0U)
            << "all_to_all of " << piece << " floats per block, in place " << in_place << ", call " << call;
      }
    }
    // All-to-allv: each rank sends the rank after it, its stores' decider, a block of the class
    // and every other rank a few floats; the blocks lie in peer order, a float apart. For 64 KiB
    // the block is the largest short of the slot (whose table takes room too), which two ranks,
    // and ranks sharing cores, read from the writer's input (eager_all_to_allv.hpp).
    const std::size_t big = std::min(published, std::size_t{16320});
    auto sent = [&](int from, int to) -> std::size_t { return to == (from + 1) % size ? big : 3; };
    auto layout_of = [&](auto count) {
      std::vector<std::size_t> counts, offsets;
      std::size_t at = 1;
      for (int peer = 0; peer < size; ++peer) {
        counts.push_back(count(peer));
        offsets.push_back(at);
        at += counts.back() + 1;
      }
      return std::pair(counts, offsets);
    };
    const auto [send_counts, send_offsets] = layout_of([&](int peer) { return sent(rank, peer); });
    const auto [recv_counts, recv_offsets] = layout_of([&](int peer) { return sent(peer, rank); });
    std::vector<float> sent_v(send_offsets.back() + send_counts.back() + 1);
    std::vector<float> received_v(recv_offsets.back() + recv_counts.back() + 1);
    for (int call = 0; call < kCalls; ++call) {
      auto value = [&](int from, int to, std::size_t i) { return verifiable::payload(from, call * size + to, i); };
      for (int peer = 0; peer < size; ++peer) {
        verifiable::fill(sent_v.data(), send_offsets[peer], send_counts[peer], DataType::f32,
                         [&](std::size_t i) { return value(rank, peer, i); });
      }
      std::fill(received_v.begin(), received_v.end(), -1.0F);
      comm.all_to_allv(std::span<const float>(sent_v), std::span<float>(received_v),
                       {send_counts, send_offsets, recv_counts, recv_offsets}, {.algorithm = "eager"})
          .wait(std::chrono::seconds(20));
      for (int from = 0; from < size; ++from) {
        ASSERT_EQ(verifiable::count_wrong(received_v.data(), recv_offsets[from], recv_counts[from], DataType::f32,
                                          [&](std::size_t i) { return value(from, rank, i); }),
                  0U)
            << "all_to_allv of " << recv_counts[from] << " floats from rank " << from << ", call " << call;
      }
    }
  }
}

void check_eager_all_to_alls_in_place(Communicator& world) {
  if (world.size() < 2) return;
  const int size = world.size();
  const int rank = world.rank();
  const auto ranks = static_cast<std::size_t>(size);
  constexpr std::size_t kBounceFloats = 256 * 1024 / sizeof(float);  // EagerMailbox::kSwapChunk
  for (std::size_t block : {std::size_t{1}, std::size_t{1001}, std::size_t{8192}, 2 * kBounceFloats + 1}) {
    std::vector<float> data(block * ranks);
    // False where the path declines the call (alike on every rank): its payloads neither fit the
    // slots nor are read from their writers' buffers here.
    auto exchange = [&] {
      try {
        world.all_to_all(std::span<const float>(data), std::span<float>(data), {.algorithm = "eager"})
            .wait(std::chrono::seconds(20));
      } catch (const Error& error) {
        if (error.code() != ErrorCode::unsupported) throw;
        return false;
      }
      return true;
    };
    // Element i of the block rank `from` sends rank `to` in call `call`.
    auto value = [&](int call, int from, int to, std::size_t i) {
      return verifiable::payload(from, call * size + to, i);
    };
    for (int call = 0; call < 3; ++call) {
      verifiable::fill(data.data(), 0, data.size(), DataType::f32,
                       [&](std::size_t i) { return value(call, rank, static_cast<int>(i / block), i % block); });
      if (!exchange()) break;
      auto expected = [&](std::size_t i) { return value(call, static_cast<int>(i / block), rank, i % block); };
      ASSERT_EQ(verifiable::count_wrong(data.data(), 0, data.size(), DataType::f32, expected), 0U)
          << "all_to_all in place of " << block << " floats per block, call " << call << ", on rank " << rank;
      if (call < 2) continue;
      // Again on what this call left: block `from` of each rank goes back to rank `from`.
      ASSERT_TRUE(exchange());
      auto back = [&](std::size_t i) { return value(call, rank, static_cast<int>(i / block), i % block); };
      ASSERT_EQ(verifiable::count_wrong(data.data(), 0, data.size(), DataType::f32, back), 0U)
          << "all_to_all in place of " << block << " floats per block, sent back, on rank " << rank;
    }
  }
}

void check_eager_all_to_allv(Communicator& world) {
  if (world.size() < 2) return;
  const int size = world.size();
  const int rank = world.rank();
  constexpr int kRounds = 5;
  // Floats rank `from` sends rank `to` in `round`: a few, but in rounds 1 and 2 rank 0 sends 80 KB
  // and more, past its slot; in round 3 every rank sends one float, small enough for a compact
  // table, but the last rank sends rank 0 a hundred, past a compact entry, so that the ranks
  // between them write compact tables and those two the full ones in one call.
  auto sent = [size](int round, int from, int to) -> std::size_t {
    if (round == 3) return from == size - 1 && to == 0 ? 100 : 1;
    const auto few = static_cast<std::size_t>(3 + from + 2 * to);
    return (round == 1 || round == 2) && from == 0 ? 20000 + few : few;
  };
  // Where each rank's block lands: in rank order, one float apart, so that the offsets matter.
  auto landing = [&](int round, int from) {
    std::size_t at = 1;
    for (int peer = 0; peer < from; ++peer) at += sent(round, peer, rank) + 1;
    return at;
  };
  for (const bool in_flight : {true, false}) {
    auto comm = world.split(0, rank);
    std::vector<std::vector<float>> inputs(kRounds), outputs(kRounds);
    std::vector<Work> works;
    if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::size_t> send_counts, send_offsets, recv_counts, recv_offsets;
      for (int peer = 0; peer < size; ++peer) {
        send_offsets.push_back(inputs[round].size());
        send_counts.push_back(sent(round, rank, peer));
        for (std::size_t k = 0; k < send_counts.back(); ++k) {
          inputs[round].push_back(static_cast<float>(verifiable::payload(rank, round * size + peer, k)));
        }
        recv_counts.push_back(sent(round, peer, rank));
        recv_offsets.push_back(landing(round, peer));
      }
      outputs[round].assign(landing(round, size), -1.0F);
      works.push_back(comm.all_to_allv(std::span<const float>(inputs[round]), std::span<float>(outputs[round]),
                                       {send_counts, send_offsets, recv_counts, recv_offsets}));
      if (!in_flight) works.back().wait(std::chrono::seconds(20));
    }  // the layouts' arrays are gone here, their memory free for the next round's
    for (int round = kRounds - 1; round >= 0; --round) works[round].wait(std::chrono::seconds(20));
    for (int round = 0; round < kRounds; ++round) {
      for (int from = 0; from < size; ++from) {
        const std::size_t at = landing(round, from);
        for (std::size_t k = 0; k < sent(round, from, rank); ++k) {
          ASSERT_EQ(outputs[round][at + k], static_cast<float>(verifiable::payload(from, round * size + rank, k)))
              << "round " << round << ", element " << k << " from rank " << from << " on rank " << rank
              << (in_flight ? ", all in flight" : ", one at a time");
        }
      }
    }
  }
  {
    // Rank 0 sends rank 1 one float more than rank 1 expects.
    auto comm = world.split(0, rank);
    std::vector<float> input(4 * static_cast<std::size_t>(size) + 1, 1.0F), output(input.size(), 0.0F);
    std::vector<std::size_t> send_counts(size, 4), recv_counts(size, 4), send_offsets(size), recv_offsets(size);
    for (int peer = 0; peer < size; ++peer) {
      recv_offsets[peer] = 4 * static_cast<std::size_t>(peer);
      send_offsets[peer] = recv_offsets[peer] + (rank == 0 && peer > 1 ? 1 : 0);  // room for the extra float
    }
    if (rank == 0) send_counts[1] = 5;
    auto call = [&] {
      comm.all_to_allv(std::span<const float>(input), std::span<float>(output),
                       {send_counts, send_offsets, recv_counts, recv_offsets})
          .wait(std::chrono::seconds(20));
    };
    if (rank <= 1) {
      const auto error = expect_error(call);
      const std::string what = error.what();
      EXPECT_EQ(error.code(), ErrorCode::size_mismatch) << what;
      EXPECT_EQ(error.context().peer, 1 - rank) << what;
      EXPECT_NE(what.find("rank 0 sends 20 bytes to rank 1, which expects 16"), std::string::npos) << what;
    } else {
      call();
    }
    world.barrier();
  }
}

void check_eager_barrier(Communicator& world) {
  if (world.size() < 2) return;
  const int size = world.size();
  const int rank = world.rank();
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: one clock for every process on a host
  auto since_epoch = [](Clock::time_point at) {
    const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch());
    return static_cast<std::int64_t>(nanoseconds.count());
  };
  {
    auto comm = world.split(0, rank);
    for (int late = 0; late < size; ++late) {
      if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::int64_t entered = since_epoch(Clock::now());
      comm.barrier(std::chrono::seconds(20));
      const std::int64_t left = since_epoch(Clock::now());
      std::vector<std::int64_t> entries(static_cast<std::size_t>(size));
      world.all_gather(std::span<const std::int64_t>(&entered, 1), std::span<std::int64_t>(entries)).wait();
      for (int r = 0; r < size; ++r) {
        EXPECT_GE(left, entries[r]) << "rank " << rank << " left the barrier (rank " << late
                                    << " late) before rank " << r << " entered it";
      }
    }
  }
  {
    auto comm = world.split(0, rank);
    const auto error = expect_error([&] {
      if (rank == 0) {
        comm.barrier(std::chrono::seconds(20));
      } else {
        std::vector<float> input(4, 1.0F), output(4 * static_cast<std::size_t>(size));
        comm.all_gather(std::span<const float>(input), std::span<float>(output), {.algorithm = "eager"})
            .wait(std::chrono::seconds(20));
      }
    });
    const std::string what = error.what();
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << what;
    EXPECT_NE(what.find("rank 0 #0 barrier"), std::string::npos) << what;
    EXPECT_NE(what.find("#0 all_gather count=4 f32"), std::string::npos) << what;
    world.barrier();
  }
  {
    auto comm = world.split(0, rank);
    if (rank == 0) {
      const auto error = expect_error([&] { comm.barrier(std::chrono::milliseconds(300)); });
      EXPECT_EQ(error.code(), ErrorCode::timeout) << error.what();
      EXPECT_GE(error.context().peer, 1) << error.what();
      EXPECT_NE(std::string(error.what()).find("eager barrier"), std::string::npos) << error.what();
    }
    world.barrier();
  }
  std::vector<int> one{rank}, all(static_cast<std::size_t>(size));
  world.all_gather(std::span<const int>(one), std::span<int>(all), {.algorithm = "eager"}).wait();
  for (int r = 0; r < size; ++r) EXPECT_EQ(all[r], r);
}

void check_eager_timeout_names_a_missing_rank(Communicator& world) {
  if (world.size() < 2) return;
  {
    auto comm = world.split(0, world.rank());
    if (comm.rank() == 0) {
      std::vector<float> input(4, 1.0F), output(4 * static_cast<std::size_t>(comm.size()));
      expect_eager_timeout(
          [&] {
            return comm.all_gather(std::span<const float>(input), std::span<float>(output), {.algorithm = "eager"});
          },
          "eager all_gather");
      // A collective that failed part-way leaves the ranks out of step: the communicator is fatal.
      const auto after = expect_error([&] {
        comm.all_gather(std::span<const float>(input), std::span<float>(output), {.algorithm = "eager"}).wait();
      });
      EXPECT_EQ(after.code(), ErrorCode::aborted) << after.what();
    }
    world.barrier();
  }
  // The world's own eager slots still work.
  std::vector<int> one{world.rank()}, all(static_cast<std::size_t>(world.size()));
  world.all_gather(std::span<const int>(one), std::span<int>(all), {.algorithm = "eager"}).wait();
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[r], r);
}

}  // namespace meshcomm::testing
