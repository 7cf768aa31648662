#include "training/fsdp_unit.hpp"

#include <algorithm>

#include "training/adamw.hpp"

namespace meshcomm::layers {

namespace {

/// Elements [rank·n, (rank+1)·n) of `whole`, zero past its end.
std::vector<float> shard_of(const std::vector<float>& whole, int rank, std::size_t n) {
  std::vector<float> shard(n, 0.0F);
  const std::size_t first = static_cast<std::size_t>(rank) * n;
  for (std::size_t i = 0; i < n && first + i < whole.size(); ++i) shard[i] = whole[first + i];
  return shard;
}

}  // namespace

FsdpUnit::FsdpUnit(ParameterLayout layout, const std::vector<float>& initial, const FsdpGroups& groups)
    : layout_(std::move(layout)), groups_(groups) {
  const auto ranks = static_cast<std::size_t>(groups.shard.size());
  padded_ = (layout_.elements() + ranks - 1) / ranks * ranks;
  const std::size_t shard_elements = padded_ / ranks;
  shard_ = shard_of(initial, groups.shard.rank(), shard_elements);
  decay_mask_ = shard_of(layout_.decay_mask(), groups.shard.rank(), shard_elements);
  gradient_shard_.assign(shard_elements, 0.0F);
  first_moment_.assign(shard_elements, 0.0F);
  second_moment_.assign(shard_elements, 0.0F);
}

void FsdpUnit::start_gather() {
  if (!whole_.empty()) return;  // still gathered
  whole_.resize(padded_);
  groups_.gathered_parameters.add(padded_bytes());
  gather_ = groups_.shard.all_gather(ConstBufferView(shard_), BufferView(whole_));
  groups_.volume.fsdp_gather += gather_volume(padded_bytes(), groups_.shard.size());
}

const float* FsdpUnit::wait_gather() {
  if (whole_.empty()) start_gather();
  gather_.wait();
  return whole_.data();
}

void FsdpUnit::release() {
  gather_.wait();
  if (whole_.empty()) return;
  whole_ = {};
  groups_.gathered_parameters.remove(padded_bytes());
}

float* FsdpUnit::gradient() {
  if (whole_gradient_.empty()) {
    whole_gradient_.assign(padded_, 0.0F);
    groups_.full_gradients.add(padded_bytes());
  }
  return whole_gradient_.data();
}

void FsdpUnit::start_reduce() {
  (void)gradient();
  reduce_ = groups_.shard.reduce_scatter(ConstBufferView(whole_gradient_), BufferView(gradient_shard_));
  reduce_pending_ = true;
  groups_.volume.fsdp_reduce += gather_volume(padded_bytes(), groups_.shard.size());
}

void FsdpUnit::finish_reduce() {
  if (!reduce_pending_) return;
  reduce_pending_ = false;
  reduce_.wait();
  if (groups_.replicas != nullptr) {
    all_reduce_sum(*groups_.replicas, gradient_shard_.data(), gradient_shard_.size(), groups_.volume.replica_reduce);
  }
  if (!whole_gradient_.empty()) {
    whole_gradient_ = {};
    groups_.full_gradients.remove(padded_bytes());
  }
}

void FsdpUnit::progress() {
  (void)gather_.test();
  if (reduce_pending_) (void)reduce_.test();
}

void FsdpUnit::step(const AdamWConfig& config, std::size_t step) {
  adamw_step(config, step, shard_.data(), gradient_shard_.data(), first_moment_.data(), second_moment_.data(),
             decay_mask_.data(), shard_.size());
}

std::vector<float> FsdpUnit::gather_now() {
  std::vector<float> whole(padded_);
  groups_.shard.all_gather(ConstBufferView(shard_), BufferView(whole)).wait();
  whole.resize(layout_.elements());
  return whole;
}

}  // namespace meshcomm::layers
