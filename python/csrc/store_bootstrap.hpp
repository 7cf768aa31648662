#pragma once

// A meshcomm Bootstrap over the c10d::Store torch hands a process group: each exchange sets one
// key per rank and waits for the others' with the group's timeout, naming the ranks whose keys
// never came.

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>

#include "meshcomm/bootstrap.hpp"

namespace meshcomm::torch_plugin {

class StoreBootstrap final : public Bootstrap {
 public:
  StoreBootstrap(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::chrono::milliseconds timeout);

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] std::string_view name() const noexcept override { return "store"; }
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::uint64_t round_ = 0;
};

}  // namespace meshcomm::torch_plugin
