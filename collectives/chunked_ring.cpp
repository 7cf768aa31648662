#include "chunked_ring.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "patterns/ring.hpp"

namespace meshcomm::detail {

namespace {
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr int kMaxChunks = 8;
}  // namespace

int ring_chunk_count(std::size_t largest_block_bytes, MemoryKind memory) noexcept {
  if (memory == MemoryKind::cuda) return 1;
  return static_cast<int>(std::clamp<std::size_t>(largest_block_bytes / kChunkBytes, 1, kMaxChunks));
}

int ring_max_chunks() noexcept { return kMaxChunks; }

ChunkedRingState::ChunkedRingState(CommunicatorImpl& comm, int chunks, int steps, OperationLabel label,
                                   std::string_view what, int first_tag)
    : comm_(comm),
      chunks_(chunks),
      steps_(steps),
      label_(label),
      what_(what),
      first_tag_(first_tag >= 0 ? first_tag : comm.reserve_internal_tags(chunks)),
      chunk_state_(static_cast<std::size_t>(chunks)) {}

void ChunkedRingState::begin_steps() {
  if (steps_ == 0) return;
  for (int chunk = 0; chunk < chunks_; ++chunk) {
    chunk_state_[chunk].works.reserve(2);  // a step's send and receive; kept for the later steps
    post(chunk, 0, first_tag_ + chunk, chunk_state_[chunk].works);
  }
}

bool ChunkedRingState::test() {
  if (finished_) return true;
  bool all_done = true;
  for (int chunk = 0; chunk < chunks_; ++chunk) {
    auto& state = chunk_state_[chunk];
    while (state.step < steps_) {
      bool ready = true;
      for (auto& work : state.works) ready = work.test() && ready;
      if (!ready) break;
      state.works.clear();
      received(chunk, state.step);
      if (++state.step < steps_) post(chunk, state.step, first_tag_ + chunk, state.works);
    }
    all_done = all_done && state.step == steps_;
  }
  if (all_done) {
    finish();
    finished_ = true;
  }
  return all_done;
}

void ChunkedRingState::wait_until(Clock::time_point deadline) {
  if (poll_until([this] { return test(); }, deadline)) return;
  const auto slowest = std::min_element(chunk_state_.begin(), chunk_state_.end(),
                                        [](const Chunk& a, const Chunk& b) { return a.step < b.step; });
  const int left = ring_left(comm_.rank(), comm_.size());
  const int right = ring_right(comm_.rank(), comm_.size());
  throw Error(ErrorCode::timeout,
              fmt::format("{} did not finish in time: stuck at step {} of {}, exchanging with peers {} (receive) and "
                          "{} (send); a rank has not joined this collective or joined another one",
                          what_, slowest->step + 1, steps_, left, right),
              comm_.context(label_, left));
}

}  // namespace meshcomm::detail
