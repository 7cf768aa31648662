#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "chunked_ring.hpp"
#include "recycled_allocation.hpp"
#include "ring_states.hpp"

namespace meshcomm::detail {

namespace {

/// Ring reduce-scatter into this rank's block of the output, then ring all-gather in place: the
/// bandwidth-optimal all-reduce for large messages (any count; blocks differ by one element at
/// most).
class RingAllReduce final : public AlgorithmOf<CollectiveKind::all_reduce> {
 public:
  RingAllReduce() : AlgorithmOf("ring") {}
  std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    // Both halves' tags are reserved now, in issue order: the all-gather starts later, from the
    // progress of this operation, when other operations may have reserved tags since.
    return start_on_tags(comm, args, comm.reserve_internal_tags(takeover_tags()));
  }
  int takeover_tags() const noexcept override { return 2 * ring_max_chunks(); }
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int first_tag) const override {
    const auto blocks = nearly_equal_blocks(args.output.count, comm.size());
    const auto mine = blocks[comm.rank()];
    void* my_block = byte_offset(args.output.data, mine.offset * size_of(args.output.type));
    const auto timeout = comm.timeout();
    return make_schedule(2, [&comm, args, blocks, my_block, timeout, first_tag](int step) {
      WorkList works;
      if (step == 0) {
        works.emplace_back(
            start_ring_reduce_scatter(comm, args.input, my_block, blocks, args.op, args.label, first_tag), timeout);
      } else {
        works.emplace_back(start_ring_all_gather(comm, args.output, blocks, args.label, first_tag + ring_max_chunks()),
                           timeout);
      }
      return works;
    });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_ring_all_reduce() { return std::make_unique<RingAllReduce>(); }

}  // namespace meshcomm::detail
