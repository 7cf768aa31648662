#include "store_bootstrap.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/error.hpp"

namespace meshcomm::torch_plugin {

StoreBootstrap::StoreBootstrap(c10::intrusive_ptr<c10d::Store> store, int rank, int size,
                               std::chrono::milliseconds timeout)
    : store_(std::move(store)), rank_(rank), size_(size), timeout_(timeout) {}

std::vector<std::byte> StoreBootstrap::all_gather(std::span<const std::byte> mine) {
  const auto round = round_++;
  auto key = [round](int rank) { return fmt::format("meshcomm/{}/{}", round, rank); };
  const auto* first = reinterpret_cast<const std::uint8_t*>(mine.data());
  store_->set(key(rank_), std::vector<std::uint8_t>(first, first + mine.size()));
  std::vector<std::string> keys;
  for (int rank = 0; rank < size_; ++rank) keys.push_back(key(rank));
  try {
    store_->wait(keys, timeout_);
  } catch (const std::exception&) {
    std::vector<int> missing;
    for (int rank = 0; rank < size_; ++rank) {
      if (!store_->check({key(rank)})) missing.push_back(rank);
    }
    throw Error(ErrorCode::timeout,
                fmt::format("bootstrap all_gather did not complete within {} ms: {} {} never arrived at this step",
                            timeout_.count(), missing.size() == 1 ? "rank" : "ranks", fmt::join(missing, ", ")),
                {.backend = "store", .operation = "bootstrap all_gather", .rank = rank_,
                 .peer = missing.empty() ? -1 : missing.front()});
  }
  std::vector<std::byte> gathered;
  gathered.reserve(mine.size() * static_cast<std::size_t>(size_));
  for (int rank = 0; rank < size_; ++rank) {
    const auto theirs = store_->get(key(rank));
    if (theirs.size() != mine.size()) {
      throw Error(ErrorCode::size_mismatch,
                  fmt::format("bootstrap all_gather: rank {} gave {} bytes but rank {} gave {}", rank_, mine.size(),
                              rank, theirs.size()),
                  {.backend = "store", .operation = "bootstrap all_gather", .rank = rank_, .peer = rank});
    }
    const auto* bytes = reinterpret_cast<const std::byte*>(theirs.data());
    gathered.insert(gathered.end(), bytes, bytes + theirs.size());
  }
  return gathered;
}

void StoreBootstrap::barrier() {
  const std::byte here{1};
  (void)all_gather(std::span(&here, 1));
}

}  // namespace meshcomm::torch_plugin
