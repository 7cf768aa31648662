#include "collective_cases.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <numeric>
#include <source_location>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/expect_error.hpp"
#include "harness/reused_bytes.hpp"
#include "verifiable/device_staging.hpp"
#include "verifiable/verifiable.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {

namespace {

constexpr DataType kAllTypes[] = {DataType::f32, DataType::f64, DataType::f16, DataType::bf16, DataType::i8,
                                  DataType::u8,  DataType::i32, DataType::u32, DataType::i64,  DataType::u64};
constexpr ReduceOp kAllOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};

using verifiable::contribution;
using verifiable::payload;
using verifiable::reduced;

bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_reduce;
}

/// A buffer of elements of one type, one byte longer than needed (so that count 0 has an
/// address), every byte `ReusedBytes::kUnwritten` until filled. Filled and checked on the host;
/// on CUDA memory the call under test sees a device copy, staged there by `upload` and back by
/// `download`.
struct TypedBuffer {
  DataType type;
  MemoryKind memory;
  ReusedBytes bytes;
  std::shared_ptr<std::byte> device;
  TypedBuffer(DataType t, std::size_t count, MemoryKind m) : type(t), memory(m), bytes(count * size_of(t) + 1) {
    if (memory == MemoryKind::cuda) device = verifiable::device_bytes(bytes.size());
  }
  template <class F>
  void fill(std::size_t first, std::size_t count, F value) {
    verifiable::fill(bytes.data(), first, count, type, value);
  }
  /// Element `index` where the call under test reads and writes it.
  void* at(std::size_t index) {
    return (memory == MemoryKind::cuda ? device.get() : bytes.data()) + index * size_of(type);
  }
  void upload() {
    if (memory == MemoryKind::cuda) verifiable::copy_to_device(device.get(), bytes.data(), bytes.size());
  }
  void download() {
    if (memory == MemoryKind::cuda) verifiable::copy_to_host(bytes.data(), device.get(), bytes.size());
  }
};

/// Counts the elements that differ from `expected(index)` and reports the first few.
template <class F>
int count_wrong(const TypedBuffer& buffer, std::size_t first, std::size_t count, F expected, const std::string& what) {
  const auto wrong = verifiable::count_wrong(buffer.bytes.data(), first, count, buffer.type, expected);
  for (std::size_t i = 0, reported = 0; wrong > 0 && i < count && reported < 3; ++i) {
    const double want = verifiable::as_stored(expected(i), buffer.type);
    const double got = verifiable::decode(buffer.bytes.data(), first + i, buffer.type);
    if (got != want) {
      ADD_FAILURE() << what << ": element " << i << " is " << got << ", expected " << want;
      ++reported;
    }
  }
  return static_cast<int>(wrong);
}

}  // namespace

std::string CollectiveCase::describe() const {
  return fmt::format("{} algorithm={} type={} op={} count={} {} root={} memory={}", to_string(kind), algorithm,
                     to_string(type), to_string(op), count, in_place ? "in-place" : "out-of-place", root,
                     to_string(memory));
}

std::vector<CollectiveCase> collective_matrix(const Communicator& comm, CollectiveKind kind, MemoryKind memory) {
  const int size = comm.size();
  std::vector<std::size_t> counts = {0, 1, 7, 1000};
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::broadcast) counts.push_back(1003);  // not divisible
  if (kind == CollectiveKind::all_to_all) {
    counts = {0, static_cast<std::size_t>(size), static_cast<std::size_t>(7 * size)};
  }
  std::vector<CollectiveCase> cases;
  for (const auto algorithm : comm.algorithms(kind)) {
    for (auto type : kAllTypes) {
      for (auto op : kAllOps) {
        if (!reduces(kind) && op != ReduceOp::sum) continue;
        for (auto count : counts) {
          for (bool in_place : {false, true}) {
            if (kind == CollectiveKind::all_to_allv && in_place) continue;
            if (kind == CollectiveKind::broadcast && !in_place) continue;
            cases.push_back({kind, std::string(algorithm), type, op, count, in_place, (size - 1) / 2, memory});
          }
        }
      }
    }
    // Large enough that each block spans several pipeline chunks (1 MiB each).
    const std::size_t large = kind == CollectiveKind::all_to_all ? static_cast<std::size_t>(size) * 262'147
                                                                 : std::size_t{700'001};
    cases.push_back({kind, std::string(algorithm), DataType::f32, ReduceOp::sum, large, false, 0, memory});
    cases.push_back({kind, std::string(algorithm), DataType::f32, ReduceOp::sum, large, true, 0, memory});
    if (kind == CollectiveKind::all_reduce) {
      // Past 8 KiB and below the measured copies: recursive doubling sends a plain copy in place.
      cases.push_back({kind, std::string(algorithm), DataType::f64, ReduceOp::max, 3001, true, 0, memory});
    }
  }
  return cases;
}

bool check_collective(Communicator& comm, const CollectiveCase& c, bool& skipped) {
  const int rank = comm.rank();
  const int size = comm.size();
  const auto n = c.count;
  const std::string what = c.describe() + fmt::format(" rank={} of {}", rank, size);
  skipped = false;
  int wrong = 0;
  try {
    switch (c.kind) {
      case CollectiveKind::all_gather: {
        TypedBuffer output(c.type, n * size, c.memory);
        TypedBuffer input(c.type, n, c.memory);
        input.fill(0, n, [&](std::size_t i) { return payload(rank, 0, i); });
        output.fill(0, n * size, [](std::size_t) { return 99.0; });
        ConstBufferView in(input.at(0), n, c.type, c.memory);
        if (c.in_place) {
          output.fill(rank * n, n, [&](std::size_t i) { return payload(rank, 0, i); });
          in = ConstBufferView(output.at(rank * n), n, c.type, c.memory);
        }
        input.upload();
        output.upload();
        comm.all_gather(in, BufferView(output.at(0), n * size, c.type, c.memory), {.algorithm = c.algorithm}).wait();
        output.download();
        for (int from = 0; from < size; ++from) {
          wrong += count_wrong(output, from * n, n, [&](std::size_t i) { return payload(from, 0, i); }, what);
        }
        break;
      }
      case CollectiveKind::reduce_scatter: {
        TypedBuffer input(c.type, n * size, c.memory);
        TypedBuffer output(c.type, n, c.memory);
        input.fill(0, n * size, [&](std::size_t i) { return contribution(c.op, rank, i, size); });
        BufferView out(output.at(0), n, c.type, c.memory);
        if (c.in_place) out = BufferView(input.at(rank * n), n, c.type, c.memory);
        input.upload();
        comm.reduce_scatter(ConstBufferView(input.at(0), n * size, c.type, c.memory), out,
                            {.op = c.op, .algorithm = c.algorithm})
            .wait();
        (c.in_place ? input : output).download();
        wrong += count_wrong(c.in_place ? input : output, c.in_place ? rank * n : 0, n,
                             [&](std::size_t i) { return reduced(c.op, rank * n + i, size); }, what);
        break;
      }
      case CollectiveKind::all_reduce: {
        TypedBuffer input(c.type, n, c.memory);
        TypedBuffer output(c.type, n, c.memory);
        input.fill(0, n, [&](std::size_t i) { return contribution(c.op, rank, i, size); });
        TypedBuffer& result = c.in_place ? input : output;
        input.upload();
        comm.all_reduce(ConstBufferView(input.at(0), n, c.type, c.memory), BufferView(result.at(0), n, c.type, c.memory),
                        {.op = c.op, .algorithm = c.algorithm})
            .wait();
        result.download();
        wrong += count_wrong(result, 0, n, [&](std::size_t i) { return reduced(c.op, i, size); }, what);
        break;
      }
      case CollectiveKind::all_to_all: {
        const std::size_t block = n / size;
        TypedBuffer input(c.type, n, c.memory);
        TypedBuffer output(c.type, n, c.memory);
        for (int to = 0; to < size; ++to) input.fill(to * block, block, [&](std::size_t k) { return payload(rank, to, k); });
        TypedBuffer& result = c.in_place ? input : output;
        input.upload();
        comm.all_to_all(ConstBufferView(input.at(0), n, c.type, c.memory), BufferView(result.at(0), n, c.type, c.memory),
                        {.algorithm = c.algorithm})
            .wait();
        result.download();
        for (int from = 0; from < size; ++from) {
          wrong += count_wrong(result, from * block, block, [&](std::size_t k) { return payload(from, rank, k); }, what);
        }
        break;
      }
      case CollectiveKind::all_to_allv: {
        // Rank r sends (n + r + 2p) % 5 elements to p, so blocks are uneven and some are empty.
        auto sent = [&](int from, int to) { return (n + static_cast<std::size_t>(from + 2 * to)) % 5 * (n > 100 ? n / 5 : 1); };
        std::vector<std::size_t> send_counts, send_offsets, recv_counts, recv_offsets;
        std::size_t send_total = 0;
        std::size_t recv_total = 0;
        for (int peer = 0; peer < size; ++peer) {
          send_counts.push_back(sent(rank, peer));
          send_offsets.push_back(send_total);
          send_total += send_counts.back();
          recv_counts.push_back(sent(peer, rank));
          recv_offsets.push_back(recv_total + 1);  // a gap, so offsets matter
          recv_total += recv_counts.back() + 1;
        }
        TypedBuffer input(c.type, send_total, c.memory);
        TypedBuffer output(c.type, recv_total, c.memory);
        for (int to = 0; to < size; ++to) {
          input.fill(send_offsets[to], send_counts[to], [&](std::size_t k) { return payload(rank, to, k); });
        }
        input.upload();
        output.upload();
        comm.all_to_allv(ConstBufferView(input.at(0), send_total, c.type, c.memory), BufferView(output.at(0), recv_total, c.type, c.memory),
                         {send_counts, send_offsets, recv_counts, recv_offsets}, {.algorithm = c.algorithm})
            .wait();
        output.download();
        for (int from = 0; from < size; ++from) {
          wrong += count_wrong(output, recv_offsets[from], recv_counts[from],
                               [&](std::size_t k) { return payload(from, rank, k); }, what);
        }
        break;
      }
      case CollectiveKind::broadcast: {
        TypedBuffer data(c.type, n, c.memory);
        data.fill(0, n, [&](std::size_t i) { return rank == c.root ? payload(c.root, 0, i) : 98.0; });
        data.upload();
        comm.broadcast(BufferView(data.at(0), n, c.type, c.memory), {.root = c.root, .algorithm = c.algorithm}).wait();
        data.download();
        wrong += count_wrong(data, 0, n, [&](std::size_t i) { return payload(c.root, 0, i); }, what);
        break;
      }
    }
  } catch (const Error& error) {
    if (error.code() == ErrorCode::unsupported) {
      skipped = true;
      return true;
    }
    ADD_FAILURE() << what << ": " << error.what();
    return false;
  }
  return wrong == 0;
}

void check_counts_that_would_wrap(Communicator& comm) {
  std::vector<float> small(8 * static_cast<std::size_t>(comm.size()), 1.0F), out(small.size());
  auto refused = [&](const char* what, const char* fragment, auto&& call) {
    const Error error = expect_error(call);
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << what << ": " << error.what();
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << what << ": " << error.what();
  };
  constexpr std::size_t kHalf = std::size_t{1} << 63;
  // 2^63 elements of f32 are 2^65 bytes.
  refused("all_gather input", "input.count = 9223372036854775808 elements of f32", [&] {
    (void)comm.all_gather(ConstBufferView(small.data(), kHalf, DataType::f32), BufferView(out.data(), 0, DataType::f32));
  });
  refused("reduce_scatter input", "input.count = 9223372036854775808 elements of f32", [&] {
    (void)comm.reduce_scatter(ConstBufferView(small.data(), kHalf, DataType::f32),
                              BufferView(out.data(), kHalf / 2, DataType::f32));
  });
  // Bytes that fit, but a count times the size that wraps (from three ranks on: with two, a count
  // whose bytes fit in a ptrdiff_t cannot wrap when doubled).
  if (comm.size() > 2) {
    const std::size_t wraps = (std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(comm.size())) + 1;
    refused("all_gather count times size", "times the communicator size", [&] {
      (void)comm.all_gather(ConstBufferView(small.data(), wraps, DataType::u8), BufferView(out.data(), 0, DataType::u8));
    });
  }
  // Offsets whose sum with the count wraps to inside the buffer.
  std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), 1), offsets(counts.size(), 0);
  const std::vector<std::size_t> zeros(counts.size(), 0);
  offsets.back() = std::numeric_limits<std::size_t>::max();
  refused("all_to_allv offsets", "is past the end of the input buffer", [&] {
    (void)comm.all_to_allv(small, out,
                           {.send_counts = counts, .send_offsets = offsets, .recv_counts = counts, .recv_offsets = zeros});
  });
  // Still usable.
  for (std::size_t i = 0; i < 8; ++i) small[i] = static_cast<float>(comm.rank());
  comm.all_gather(std::span<const float>(small.data(), 8), std::span<float>(out.data(), out.size())).wait();
  for (int rank = 0; rank < comm.size(); ++rank) {
    EXPECT_EQ(out[static_cast<std::size_t>(rank) * 8], static_cast<float>(rank)) << "block of rank " << rank;
  }
}

void check_mismatched_calls(Communicator& world) {
  if (world.size() < 2) return;
  const bool odd_one = world.rank() == 0;
  std::vector<float> in(4096, 1.0F), out(4096 * static_cast<std::size_t>(world.size()), 0.0F);
  std::vector<double> in_double(4096, 1.0), out_double(out.size(), 0.0);
  // Each case's call as rank 0 makes it (`as_odd_one`) and as the others make it.
  auto gather = [&](Communicator& comm, std::string_view algorithm, std::size_t count) {
    return comm.all_gather(std::span<const float>(in.data(), count), std::span<float>(out.data(), count * comm.size()),
                           {.algorithm = algorithm});
  };
  auto scatter = [&](Communicator& comm, std::string_view algorithm, std::size_t count, ReduceOp op) {
    return comm.reduce_scatter(std::span<const float>(out.data(), count * comm.size()),
                               std::span<float>(in.data(), count), {.op = op, .algorithm = algorithm});
  };
  struct Case {
    const char* what;
    CollectiveKind kind;
    std::function<Work(Communicator&, std::string_view, bool as_odd_one)> call;
  };
  const std::vector<Case> cases = {
      {"all_gather count 1000 on rank 0, 1024 elsewhere", CollectiveKind::all_gather,
       [&](Communicator& comm, std::string_view algorithm, bool odd) {
         return gather(comm, algorithm, odd ? 1000 : 1024);
       }},
      {"all_gather f32 on rank 0, f64 elsewhere", CollectiveKind::all_gather,
       [&](Communicator& comm, std::string_view algorithm, bool odd) {
         if (odd) return gather(comm, algorithm, 1000);
         return comm.all_gather(std::span<const double>(in_double.data(), 1000),
                                std::span<double>(out_double.data(), 1000 * comm.size()), {.algorithm = algorithm});
       }},
      {"all_gather on rank 0, reduce_scatter elsewhere", CollectiveKind::all_gather,
       [&](Communicator& comm, std::string_view algorithm, bool odd) {
         return odd ? gather(comm, algorithm, 1024) : scatter(comm, algorithm, 1024, ReduceOp::sum);
       }},
      {"reduce_scatter sum on rank 0, max elsewhere", CollectiveKind::reduce_scatter,
       [&](Communicator& comm, std::string_view algorithm, bool odd) {
         return scatter(comm, algorithm, 1024, odd ? ReduceOp::sum : ReduceOp::max);
       }},
      {"reduce_scatter count 1000 on rank 0, 1024 elsewhere", CollectiveKind::reduce_scatter,
       [&](Communicator& comm, std::string_view algorithm, bool odd) {
         return scatter(comm, algorithm, odd ? 1000 : 1024, ReduceOp::sum);
       }},
  };
  // Every rank fails: with both calls listed (native, whose ranks exchange their calls at a
  // shape's first call), with the peer's message of another shape named (the receiving ranks
  // of meshcomm's algorithms), or with a timeout naming a peer not heard from. The ranks that
  // see no message of another shape (those not next to rank 0 in a ring, and every rank of a
  // native call whose shapes were agreed before) can only time out, so the wait is short; the
  // ranks that do see one name it sooner (in 140-230 ms, measured at 2 and 4 ranks).
  // A collective of meshcomm's that failed part-way leaves the ranks out of step: whatever failed
  // it, the communicator is fatal afterwards, and its next call fails at once. (Native calls on mpi
  // agree on their shapes before anything moves, so a disagreement there leaves it usable.)
  auto expect_fatal = [&](const std::string& what, Communicator& comm, std::string_view algorithm) {
    if (algorithm == "native") return;
    std::vector<float> one(1, 1.0F), all(static_cast<std::size_t>(comm.size()));
    try {
      comm.all_gather(std::span<const float>(one), std::span(all)).wait(std::chrono::milliseconds(300));
      ADD_FAILURE() << what << ": the next call on rank " << world.rank() << " returned success";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::aborted) << what << ": the next call: " << error.what();
    }
  };
  auto expect_failure = [&](const std::string& what, Communicator& comm, std::string_view algorithm,
                            const std::function<Work()>& call) {
    try {
      call().wait(std::chrono::milliseconds(300));
      ADD_FAILURE() << what << ": rank " << world.rank() << " returned success";
    } catch (const Error& error) {
      const std::string text = error.what();
      switch (error.code()) {
        case ErrorCode::unsupported: return;  // the algorithm does not run here at all
        case ErrorCode::invalid_argument:
        case ErrorCode::size_mismatch:
          EXPECT_NE(text.find("disagree about this collective"), std::string::npos) << what << ": " << text;
          if (text.find("the ranks disagree about this collective: rank 0 #") != std::string::npos) {
            expect_fatal(what, comm, algorithm);
            return;
          }
          break;
        case ErrorCode::timeout: break;
        default: ADD_FAILURE() << what << ": " << text;
      }
      EXPECT_GE(error.context().peer, 0) << what << ": the error names no peer: " << text;
      expect_fatal(what, comm, algorithm);
    }
  };
  for (const auto& c : cases) {
    for (auto algorithm : world.algorithms(c.kind)) {
      // The other kind of call must run an algorithm of the same name; every kind has these.
      if (std::string_view(c.what).find("reduce_scatter elsewhere") != std::string_view::npos && algorithm != "ring" &&
          algorithm != "native") {
        continue;
      }
      const std::string what = std::string(c.what) + ", algorithm " + std::string(algorithm);
      {
        auto comm = world.split(0, world.rank());
        expect_failure(what, comm, algorithm, [&] { return c.call(comm, algorithm, odd_one); });
        world.barrier();
      }
      if (algorithm == "native" && world.backend() == BackendKind::mpi) {
        // Both shapes already agreed (each rank made both calls), then the ranks disagree.
        auto comm = world.split(0, world.rank());
        c.call(comm, algorithm, true).wait();
        c.call(comm, algorithm, false).wait();
        expect_failure(what + ", both shapes seen before", comm, algorithm,
                       [&] { return c.call(comm, algorithm, odd_one); });
        world.barrier();
      }
    }
  }
  // An all-reduce in place on rank 0 alone: in place or not is part of its shape (the table
  // chooses by it), and meshcomm's tag-matched algorithms fail it as a disagreement.
  for (auto algorithm : world.algorithms(CollectiveKind::all_reduce)) {
    if (algorithm != "ring" && algorithm != "recursive_doubling" && algorithm != "rabenseifner") continue;
    auto comm = world.split(0, world.rank());
    expect_failure("all_reduce in place on rank 0 alone, algorithm " + std::string(algorithm), comm, algorithm, [&] {
      const std::span<float> data(in.data(), 1024);
      if (odd_one) return comm.all_reduce(std::span<const float>(data), data, {.algorithm = algorithm});
      const std::span<float> output(out.data(), 1024);
      return comm.all_reduce(std::span<const float>(data), output, {.algorithm = algorithm});
    });
    world.barrier();
  }
  if (world.backend() == BackendKind::mpi) {
    // Native all_to_allv where ranks 0 and 1 disagree about what 0 sends 1: size_mismatch on both
    // (the pair counts are exchanged first); the other ranks time out naming a peer. Ranks 0 and 1
    // wait long enough for a peer slowed by a loaded machine (a sanitized build beside others) to
    // arrive: their outcome must not hang on when it does.
    auto comm = world.split(0, world.rank());
    const auto wait = comm.rank() < 2 ? std::chrono::milliseconds(30000) : std::chrono::milliseconds(300);
    const auto ranks = static_cast<std::size_t>(comm.size());
    std::vector<std::size_t> send_counts(ranks, 4), recv_counts(ranks, 4), offsets(ranks);
    for (std::size_t peer = 0; peer < ranks; ++peer) offsets[peer] = 16 * peer;
    if (comm.rank() == 0) send_counts[1] = 10;
    if (comm.rank() == 1) recv_counts[0] = 8;
    try {
      comm.all_to_allv(std::span<const float>(in.data(), 16 * ranks), std::span<float>(out.data(), 16 * ranks),
                       {send_counts, offsets, recv_counts, offsets}, {.algorithm = "native"})
          .wait(wait);
      ADD_FAILURE() << "native all_to_allv with disagreeing counts: rank " << comm.rank() << " returned success";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), comm.rank() < 2 ? ErrorCode::size_mismatch : ErrorCode::timeout) << error.what();
      EXPECT_GE(error.context().peer, 0) << error.what();
    }
    world.barrier();
  }
  if (world.backend() == BackendKind::mpi) {
    // Only rank 0 calls: its native all-gather, of a shape never agreed and of one agreed, times
    // out naming a rank that sent no report of where it was.
    for (std::size_t count : {std::size_t{1000}, std::size_t{1024}}) {
      auto comm = world.split(0, world.rank());
      gather(comm, "native", 1024).wait();
      if (odd_one) {
        const auto error = expect_error([&] { gather(comm, "native", count).wait(std::chrono::milliseconds(300)); });
        EXPECT_EQ(error.code(), ErrorCode::timeout) << error.what();
        EXPECT_GE(error.context().peer, 1) << error.what();
        // It listened for the others' reports as long as it had waited (300 ms, and up to two ticks
        // of the coarse clock its deadline was taken from, at most 10 ms each), not a second.
        const std::string text = error.what();
        const std::string_view silent = "sent no report within ";
        const auto at = text.find(silent);
        EXPECT_NE(at, std::string::npos) << text;
        const int listened = at == std::string::npos ? -1 : std::atoi(text.c_str() + at + silent.size());
        EXPECT_TRUE(listened >= 100 && listened <= 300 + 2 * 10 + 1) << text;
      }
      world.barrier();
    }
  }
}

void check_fingerprint_exchange(Communicator& comm) {
  if (comm.size() < 2) return;
  const bool odd_one = comm.rank() == comm.size() - 1;
  std::vector<int> first_ranks(static_cast<std::size_t>(comm.size() - 1));
  std::iota(first_ranks.begin(), first_ranks.end(), 0);
  const std::string others = fmt::format("{} {}", comm.size() == 2 ? "rank" : "ranks", fmt::join(first_ranks, ","));
  const std::string last = fmt::format("rank {}", comm.size() - 1);
  std::vector<float> in(1024, 1.0F), out(1024 * static_cast<std::size_t>(comm.size()), 0.0F);
  std::vector<double> in_double(1024, 1.0), out_double(out.size(), 0.0);
  const std::size_t n = odd_one ? 1000 : 1024;
  // Every rank's error lists each group of ranks with its call: "<others> #k <call> vs <last> #k <call>".
  auto disagree = [&](CollectiveKind kind, const std::string& theirs, const std::string& odd, auto&& call) {
    for (auto algorithm : comm.algorithms(kind)) {
      const Error error = expect_error([&] { call(algorithm).wait(); });
      const std::string text = error.what();
      EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << text;
      const auto at = text.find("the ranks disagree about this collective: " + others + " #");
      EXPECT_NE(at, std::string::npos) << "algorithm " << algorithm << ": " << text;
      for (const auto& part : {" " + theirs + " vs " + last + " #", " " + odd + "; every rank must"}) {
        EXPECT_NE(text.find(part, at), std::string::npos) << "algorithm " << algorithm << ": " << text;
      }
    }
  };
  disagree(CollectiveKind::all_gather, "all_gather count=1024 f32", "all_gather count=1000 f32",
           [&](std::string_view algorithm) {
             return comm.all_gather(std::span<const float>(in.data(), n), std::span<float>(out.data(), n * comm.size()),
                                    {.algorithm = algorithm});
           });
  disagree(CollectiveKind::all_gather, "all_gather count=1024 f32", "all_gather count=1024 f64",
           [&](std::string_view algorithm) {
             if (!odd_one) return comm.all_gather(in, out, {.algorithm = algorithm});
             return comm.all_gather(in_double, out_double, {.algorithm = algorithm});
           });
  disagree(CollectiveKind::reduce_scatter, "reduce_scatter count=1024 f32 sum", "reduce_scatter count=1024 f32 max",
           [&](std::string_view algorithm) {
             return comm.reduce_scatter(out, in, {.op = odd_one ? ReduceOp::max : ReduceOp::sum, .algorithm = algorithm});
           });
  disagree(CollectiveKind::all_reduce, "all_reduce count=1024 f32 sum", "all_reduce count=1024 f32 sum in place",
           [&](std::string_view algorithm) {
             if (odd_one) {
               return comm.all_reduce(std::span<const float>(in), std::span<float>(in), {.algorithm = algorithm});
             }
             return comm.all_reduce(std::span<const float>(in), std::span<float>(out.data(), in.size()),
                                    {.algorithm = algorithm});
           });
  disagree(CollectiveKind::all_reduce, "all_reduce count=1024 f32 sum", "broadcast count=1024 f32 root=0",
           [&](std::string_view algorithm) {
             if (odd_one) return comm.broadcast(std::span<float>(in), {.root = 0});
             return comm.all_reduce(std::span<const float>(in), std::span<float>(out.data(), in.size()),
                                    {.algorithm = algorithm});
           });
  // Still usable, and agreeing calls pass the exchange.
  in.assign(in.size(), static_cast<float>(comm.rank()));
  comm.all_gather(in, out).wait();
  for (int rank = 0; rank < comm.size(); ++rank) {
    EXPECT_EQ(out[static_cast<std::size_t>(rank) * in.size()], static_cast<float>(rank)) << "block of rank " << rank;
  }
}

void check_call_site_exchange(Communicator& comm) {
  if (comm.size() < 2) return;
  const bool skipper = comm.rank() == comm.size() - 1;
  std::vector<float> in(8, 1.0F), out(8 * static_cast<std::size_t>(comm.size()));
  const auto here = std::source_location::current().line();
  auto first = [&] { return comm.all_gather(in, out); };   // called from line here + 1
  auto second = [&] { return comm.all_gather(in, out); };  // and here + 2
  const auto first_line = here + 1, second_line = here + 2;
  const Error error = expect_error([&] {
    if (!skipper) first().wait();
    second().wait();
  });
  EXPECT_EQ(error.code(), ErrorCode::invalid_argument) << error.what();
  // The ranks' lines differ, so each rank names only its own; the text is the same everywhere.
  const std::string skipped = fmt::format("#0 all_gather count=8 f32 at collective_cases.cpp:{}", second_line);
  EXPECT_NE(std::string(error.what()).find(fmt::format("rank {} {}", comm.size() - 1, skipped)), std::string::npos)
      << error.what();
  if (!skipper) {
    const std::string made = fmt::format("#0 all_gather count=8 f32 at collective_cases.cpp:{} vs", first_line);
    EXPECT_NE(std::string(error.what()).find(made), std::string::npos) << error.what();
  }
  comm.barrier();
}

void check_collective_matrix(Communicator& comm, CollectiveKind kind, MemoryKind memory) {
  int ran = 0;
  for (const auto& c : collective_matrix(comm, kind, memory)) {
    bool skipped = false;
    if (!check_collective(comm, c, skipped)) return;  // a failed collective leaves the communicator fatal
    if (!skipped) ++ran;
  }
  EXPECT_GT(ran, 0) << "no case of " << to_string(kind) << " ran";
}

}  // namespace meshcomm::testing
