#include <vector>

#include "algorithm.hpp"
#include "algorithms.hpp"
#include "internal_p2p.hpp"
#include "patterns/binomial.hpp"
#include "patterns/ring.hpp"
#include "recycled_allocation.hpp"

namespace meshcomm::detail {

namespace {

/// Binomial tree rooted at `root`: receive from the parent, then send to every child at once.
class BinomialBroadcast final : public OneTagAlgorithmOf<CollectiveKind::broadcast> {
 public:
  BinomialBroadcast() : OneTagAlgorithmOf("binomial") {}
  std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                           int tag) const override {
    const int size = comm.size();
    const int root = args.root;
    const int relative = wrap_rank(comm.rank() - root, size);
    return make_schedule(2, [&comm, args, size, root, relative, tag](int step) {
      WorkList works;
      if (step == 0 && relative != 0) {
        works.push_back(recv_bytes(comm, args.output.data, args.output.bytes(),
                                   wrap_rank(binomial_parent(relative) + root, size), tag, args.label, args.output.memory));
      } else if (step == 1) {
        for (int child : binomial_children(relative, size)) {
          works.push_back(send_bytes(comm, args.output.data, args.output.bytes(), wrap_rank(child + root, size), tag,
                                     args.label, args.output.memory));
        }
      }
      return works;
    });
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_binomial_broadcast() { return std::make_unique<BinomialBroadcast>(); }

}  // namespace meshcomm::detail
