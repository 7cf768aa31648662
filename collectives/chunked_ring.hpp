#pragma once

#include <string_view>
#include <vector>

#include "communicator_impl.hpp"
#include "patterns/partition.hpp"

namespace meshcomm::detail {

/// Message pieces a ring step is cut into, so that large messages pipeline: chunk c of step s+1
/// starts as soon as chunk c of step s is done, while other chunks are still moving. Host memory
/// only: on CUDA memory every chunk is a device copy or kernel issued and awaited from the host,
/// whose fixed cost outweighs what pipelining saves, so a block travels whole (one chunk).
int ring_chunk_count(std::size_t largest_block_bytes, MemoryKind memory) noexcept;
/// The most chunks a ring splits into: the tags to reserve for a ring started later.
int ring_max_chunks() noexcept;

/// The progress engine of chunked ring algorithms. Each chunk walks through the ring steps on
/// its own: post its send and receive for step s, and when both are done, hand the received data
/// to `received` and post step s+1. Chunks use distinct tags, so their messages never cross.
class ChunkedRingState : public WorkState {
 public:
  bool test() override;
  void wait_until(Clock::time_point deadline) override;

  /// Posts the first step of every chunk; called once, right after construction.
  void begin_steps();

 protected:
  /// `what` names the algorithm in errors: a literal ("ring all_gather"), kept as a view.
  /// `first_tag` is the first of `chunks` tags reserved when the operation started (-1: reserve
  /// them now, which is only right when this state is made as the operation starts: tags must be
  /// reserved in issue order).
  ChunkedRingState(CommunicatorImpl& comm, int chunks, int steps, OperationLabel label, std::string_view what,
                   int first_tag);

  /// Posts step `step` of `chunk` on tag `tag`: add its send and receive to `works`.
  virtual void post(int chunk, int step, int tag, WorkList& works) = 0;
  /// Step `step` of `chunk` has completed: its received data is in place.
  virtual void received(int /*chunk*/, int /*step*/) {}
  /// Every chunk has completed every step.
  virtual void finish() {}

  CommunicatorImpl& comm_;
  const int chunks_;
  const int steps_;
  const OperationLabel label_;

 private:
  struct Chunk {
    int step = 0;
    WorkList works;
  };
  std::string_view what_;
  int first_tag_;
  std::vector<Chunk> chunk_state_;
  bool finished_ = false;
};

}  // namespace meshcomm::detail
