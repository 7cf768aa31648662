#include "algorithm_list.hpp"

#include "algorithms.hpp"
#include "hot_path.hpp"

namespace meshcomm::detail {

AlgorithmList AlgorithmList::built_in() {
  AlgorithmList list;
  auto& all = list.algorithms_;
  all.push_back(make_ring_all_gather());
  all.push_back(make_recursive_doubling_all_gather());
  all.push_back(make_pairwise_all_gather());
  all.push_back(make_shm_all_gather());
  all.push_back(make_ring_reduce_scatter());
  all.push_back(make_recursive_halving_reduce_scatter());
  all.push_back(make_pairwise_reduce_scatter());
  all.push_back(make_shm_reduce_scatter());
  all.push_back(make_ring_all_reduce());
  all.push_back(make_recursive_doubling_all_reduce());
  all.push_back(make_rabenseifner_all_reduce());
  all.push_back(make_pairwise_all_reduce());
  all.push_back(make_shm_all_reduce());
  all.push_back(make_pairwise_all_to_all());
  all.push_back(make_shm_all_to_all());
  all.push_back(make_pairwise_all_to_allv());
  all.push_back(make_binomial_broadcast());
  all.push_back(make_shm_broadcast());
  for (auto& native : make_native_algorithms()) all.push_back(std::move(native));
  for (auto& eager : make_eager_algorithms()) all.push_back(std::move(eager));
  for (const auto& algorithm : all) {
    list.by_kind_.at(static_cast<std::size_t>(algorithm->kind())).push_back({algorithm->name(), algorithm.get()});
  }
  return list;
}

MESHCOMM_HOT const Algorithm* AlgorithmList::find(CollectiveKind kind, std::string_view name) const noexcept {
  for (const auto& named : by_kind_[static_cast<std::size_t>(kind)]) {
    if (named.name == name) return named.algorithm;
  }
  return nullptr;
}

std::vector<std::string_view> AlgorithmList::names(CollectiveKind kind) const {
  std::vector<std::string_view> result;
  for (const auto& named : by_kind_[static_cast<std::size_t>(kind)]) result.push_back(named.name);
  return result;
}

}  // namespace meshcomm::detail
