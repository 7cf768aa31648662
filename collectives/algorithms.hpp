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
std::unique_ptr<Algorithm> make_recursive_halving_reduce_scatter();
std::unique_ptr<Algorithm> make_pairwise_all_to_all();
std::unique_ptr<Algorithm> make_pairwise_all_to_allv();
std::unique_ptr<Algorithm> make_binomial_broadcast();
std::unique_ptr<Algorithm> make_shm_all_gather();
std::unique_ptr<Algorithm> make_shm_reduce_scatter();
std::vector<std::unique_ptr<Algorithm>> make_native_algorithms();
std::vector<std::unique_ptr<Algorithm>> make_eager_algorithms();

/// Why an algorithm over recursive doubling or halving cannot run on `comm`: empty where its
/// size is a power of two.
std::string needs_power_of_two_ranks(const CommunicatorImpl& comm);

}  // namespace meshcomm::detail
