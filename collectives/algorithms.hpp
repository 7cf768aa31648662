#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithm.hpp"

namespace meshcomm::detail {

// One factory per algorithm; algorithm_list.cpp is the one place that lists them all.
std::unique_ptr<Algorithm> make_ring_all_gather();
std::unique_ptr<Algorithm> make_ring_reduce_scatter();
std::unique_ptr<Algorithm> make_ring_all_reduce();
std::unique_ptr<Algorithm> make_recursive_doubling_all_reduce();
std::unique_ptr<Algorithm> make_rabenseifner_all_reduce();
std::unique_ptr<Algorithm> make_recursive_doubling_all_gather();
std::unique_ptr<Algorithm> make_pairwise_all_gather();
std::unique_ptr<Algorithm> make_pairwise_reduce_scatter();
std::unique_ptr<Algorithm> make_pairwise_all_reduce();
std::unique_ptr<Algorithm> make_recursive_halving_reduce_scatter();
std::unique_ptr<Algorithm> make_pairwise_all_to_all();
std::unique_ptr<Algorithm> make_pairwise_all_to_allv();
std::unique_ptr<Algorithm> make_binomial_broadcast();
std::unique_ptr<Algorithm> make_shm_all_gather();
std::unique_ptr<Algorithm> make_shm_reduce_scatter();
std::unique_ptr<Algorithm> make_shm_all_reduce();
std::unique_ptr<Algorithm> make_shm_broadcast();
std::unique_ptr<Algorithm> make_shm_all_to_all();
std::vector<std::unique_ptr<Algorithm>> make_native_algorithms();
std::vector<std::unique_ptr<Algorithm>> make_eager_algorithms();

struct CallRecord;

/// `args`, a call the `eager` algorithm runs, on the communicator's eager slots (which must
/// exist); the ranks compare `record` to tell whether they agree, and `buffers` (if any), the
/// owner of the memory `args` points to, is kept until it finishes. Null if it finished inside
/// the call. Like every eager operation it must start as its call is made, in call order.
std::shared_ptr<WorkState> start_eager(CommunicatorImpl& comm, const CollectiveArgs& args, const CallRecord& record,
                                       std::shared_ptr<const void> buffers);

/// The barrier that is collective number `call` on `comm`, on its eager slots (which must exist):
/// it finishes once every rank has reached it. Null if it finished inside the call. Like every
/// eager operation it must start as its call is made, in call order.
std::shared_ptr<WorkState> start_eager_barrier(CommunicatorImpl& comm, OperationLabel label, std::uint64_t call);

/// Why an algorithm over recursive doubling or halving cannot run on `comm`: empty where its
/// size is a power of two.
std::string needs_power_of_two_ranks(const CommunicatorImpl& comm);

}  // namespace meshcomm::detail
