#include "abort_cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "harness/expect_error.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::testing {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kLateTag = 5;
constexpr float kUntouched = -7.0F;

double microseconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

/// Waits on `work` with a minute's timeout, which must fail with `aborted`; returns the error.
Error expect_aborted(Work& work, const char* what) {
  auto error = expect_error([&] { work.wait(std::chrono::minutes(1)); });
  EXPECT_EQ(error.code(), ErrorCode::aborted) << what << ": " << error.what();
  EXPECT_NE(std::string(error.what()).find("Communicator::abort() was called on rank 0"), std::string::npos)
      << what << ": the error does not say the communicator was aborted: " << error.what();
  return error;
}

}  // namespace

void check_abort(Communicator& world) {
  if (world.size() < 2) return;
  auto comm = world.split(0, world.rank());
  const bool has_native = comm.backend() == BackendKind::mpi;  // Open MPI's own collectives
  const std::size_t block = 256;
  std::vector<float> received(block, kUntouched);
  std::vector<float> sent(1 << 18, 1.0F);  // 1 MiB: past MPI's eager limit, so the send stays pending
  std::vector<float> shard(block, 2.0F), gathered(block * static_cast<std::size_t>(comm.size()), kUntouched);
  std::vector<float> native_gathered(gathered.size(), kUntouched);

  if (has_native) {
    // Agrees the native all-gather's shape, so that rank 0's next one is posted at once.
    comm.all_gather(std::span<const float>(shard), std::span(native_gathered), {.algorithm = "native"})
        .wait(std::chrono::minutes(1));
  }
  if (comm.rank() == 0) {
    auto receive = comm.irecv(std::span(received), 1, kLateTag);
    auto send = comm.isend(std::span<const float>(sent), 1, kLateTag + 1);
    auto gather = comm.all_gather(std::span<const float>(shard), std::span(gathered), {.algorithm = "ring"});
    Work native, unagreed_native;
    if (has_native) {
      native = comm.all_gather(std::span<const float>(shard), std::span(native_gathered), {.algorithm = "native"});
      // A shape no rank has called yet waits for the ranks to agree on it before it is posted.
      unagreed_native = comm.all_gather(std::span<const float>(shard.data(), block / 2),
                                        std::span(gathered.data(), block / 2 * comm.size()), {.algorithm = "native"});
    }
    Clock::time_point abort_called, abort_returned;
    std::thread watchdog([&] {
      std::this_thread::sleep_for(milliseconds(200));
      abort_called = Clock::now();
      comm.abort();
      abort_returned = Clock::now();
    });
    const auto error = expect_aborted(receive, "the pending receive");
    const auto receive_failed = Clock::now();
    watchdog.join();
    EXPECT_NE(std::string(error.what()).find("withdrawn"), std::string::npos) << error.what();
    EXPECT_EQ(error.context().peer, 1) << error.what();
    expect_aborted(send, "the pending send");
    expect_aborted(gather, "the pending ring all_gather");
    if (has_native) {
      const auto native_error = expect_aborted(native, "the pending native all_gather");
      EXPECT_NE(std::string(native_error.what()).find("must stay valid"), std::string::npos) << native_error.what();
      const auto unagreed_error = expect_aborted(unagreed_native, "the native all_gather of a new shape");
      EXPECT_NE(std::string(unagreed_error.what()).find("never started"), std::string::npos) << unagreed_error.what();
    }
    const auto later = expect_error([&] { comm.barrier(std::chrono::minutes(1)); });
    EXPECT_EQ(later.code(), ErrorCode::aborted) << later.what();
    std::printf("[abort] %s: abort() returned in %.1f us; the waiting receive failed %.1f us after abort() was "
                "called\n",
                std::string(to_string(comm.backend())).c_str(), microseconds_between(abort_called, abort_returned),
                microseconds_between(abort_called, receive_failed));
  }
  world.barrier();
  Work late_send;
  if (comm.rank() != 0) {
    // Too late: rank 0 withdrew this receive, so the message must not land in its buffer.
    if (comm.rank() == 1) late_send = comm.isend(std::span<const float>(shard), 0, kLateTag);
    if (has_native) {
      // Joins rank 0's native all-gather, which MPI could not withdraw: it still completes.
      std::vector<float> gathered_here(gathered.size(), 0.0F);
      comm.all_gather(std::span<const float>(shard), std::span(gathered_here), {.algorithm = "native"})
          .wait(std::chrono::minutes(1));
    }
  }
  world.barrier();  // on rank 0, this progresses the abandoned collective while the others complete it
  if (comm.rank() == 0) {
    EXPECT_TRUE(std::all_of(received.begin(), received.end(), [](float value) { return value == kUntouched; }))
        << "a message sent after abort() was written into the withdrawn receive's buffer";
  }
  world.barrier();
}

}  // namespace meshcomm::testing
