#include <poll.h>

#include <optional>

#include <fmt/format.h>

#include "arrivals.hpp"
#include "star_exchange.hpp"

namespace meshcomm::detail {

namespace {

/// Rank 0's side: the listener, one connection per rank once it has said hello, and the
/// round's contributions.
class StarServer final : public StarExchange {
 public:
  StarServer(int size, TcpSocket listener, std::chrono::milliseconds timeout)
      : size_(size), listener_(std::move(listener)), timeout_(timeout), ranks_(static_cast<std::size_t>(size)) {}

  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    if (failure_) throw *failure_;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    std::vector<std::optional<std::vector<std::byte>>> contributions(static_cast<std::size_t>(size_));
    contributions[0] = std::vector<std::byte>(mine.begin(), mine.end());
    std::size_t arrived = 1;
    while (arrived < contributions.size()) {
      const std::size_t watched_strangers = strangers_.size();
      std::vector<pollfd> watched{{.fd = listener_.get(), .events = POLLIN, .revents = 0}};
      for (const auto& stranger : strangers_) watched.push_back({.fd = stranger.get(), .events = POLLIN, .revents = 0});
      std::vector<int> watched_ranks;
      for (int rank = 1; rank < size_; ++rank) {
        if (!ranks_[static_cast<std::size_t>(rank)].valid() || contributions[static_cast<std::size_t>(rank)]) continue;
        watched.push_back({.fd = ranks_[static_cast<std::size_t>(rank)].get(), .events = POLLIN, .revents = 0});
        watched_ranks.push_back(rank);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(watched.data(), watched.size(), static_cast<int>(left.count())) == 0) {
        std::vector<int> missing;
        for (std::size_t rank = 1; rank < contributions.size(); ++rank) {
          if (!contributions[rank]) missing.push_back(static_cast<int>(rank));
        }
        fail(arrival_timeout("env", "all_gather", 0, timeout_, missing));
      }
      if ((watched[0].revents & POLLIN) != 0) accept_strangers();
      for (std::size_t index = 0; index < watched_strangers; ++index) {
        if (watched[1 + index].revents != 0) greet(index, deadline);
      }
      std::erase_if(strangers_, [](const TcpSocket& socket) { return !socket.valid(); });
      const std::size_t first_rank = 1 + watched_strangers;
      for (std::size_t index = 0; index < watched_ranks.size(); ++index) {
        if (watched[first_rank + index].revents == 0) continue;
        const int rank = watched_ranks[index];
        contributions[static_cast<std::size_t>(rank)] = receive_contribution(rank, mine.size(), deadline);
        ++arrived;
      }
    }
    std::vector<std::byte> gathered;
    gathered.reserve(mine.size() * contributions.size());
    for (const auto& contribution : contributions) gathered.insert(gathered.end(), contribution->begin(), contribution->end());
    for (int rank = 1; rank < size_; ++rank) {
      StarFrame header{.kind = StarFrame::result, .value = 0, .round = round_, .bytes = 0};
      if (send_frame(ranks_[static_cast<std::size_t>(rank)], header, gathered, deadline) != TransferEnd::done) {
        fail(Error(ErrorCode::peer_failure,
                   fmt::format("bootstrap all_gather: rank {} hung up before rank 0 could send it the result", rank),
                   {.backend = "env", .operation = "bootstrap all_gather", .rank = 0, .peer = rank}));
      }
    }
    ++round_;
    return gathered;
  }

 private:
  /// Takes every pending connection; each says which rank it is in its first frame.
  void accept_strangers() {
    while (true) {
      TcpSocket accepted = accept_from(listener_);
      if (!accepted.valid()) return;
      strangers_.push_back(std::move(accepted));
    }
  }

  /// Reads the hello of stranger `index` and files it under its rank; a connection that is not a
  /// meshcomm rank is dropped.
  void greet(std::size_t index, SteadyTime deadline) {
    TcpSocket socket = std::move(strangers_[index]);
    StarFrame hello;
    if (receive_exact(socket, std::as_writable_bytes(std::span(&hello, 1)), deadline) != TransferEnd::done ||
        hello.kind != StarFrame::hello) {
      return;
    }
    const int rank = hello.value;
    if (hello.round != static_cast<std::uint64_t>(size_)) {
      fail(Error(ErrorCode::invalid_argument,
                 fmt::format("bootstrap: rank {} was started with WORLD_SIZE = {} but rank 0 with {}; every rank "
                             "must be given the same",
                             rank, hello.round, size_),
                 {.backend = "env", .operation = "bootstrap hello", .rank = 0, .peer = rank}),
           &socket);
    }
    if (rank < 1 || rank >= size_ || ranks_[static_cast<std::size_t>(rank)].valid()) {
      fail(Error(ErrorCode::invalid_argument,
                 fmt::format("bootstrap: a process connected as RANK = {}, which {}; every process must have its "
                             "own RANK in [0, {})",
                             rank, rank < 1 || rank >= size_ ? "is not another rank's" : "another process already is",
                             size_),
                 {.backend = "env", .operation = "bootstrap hello", .rank = 0, .peer = rank}),
           &socket);
    }
    ranks_[static_cast<std::size_t>(rank)] = std::move(socket);
  }

  std::vector<std::byte> receive_contribution(int rank, std::size_t expected, SteadyTime deadline) {
    const auto& socket = ranks_[static_cast<std::size_t>(rank)];
    StarFrame header;
    if (receive_exact(socket, std::as_writable_bytes(std::span(&header, 1)), deadline) != TransferEnd::done ||
        header.kind != StarFrame::contribution || header.round != round_) {
      fail(Error(ErrorCode::peer_failure,
                 fmt::format("bootstrap all_gather: rank {} hung up (its process ended or gave up) instead of "
                             "contributing to round {}",
                             rank, round_),
                 {.backend = "env", .operation = "bootstrap all_gather", .rank = 0, .peer = rank}));
    }
    if (header.bytes != expected) {
      fail(Error(ErrorCode::size_mismatch,
                 fmt::format("bootstrap all_gather: rank 0 gave {} bytes but rank {} gave {}; every rank must give the "
                             "same number",
                             expected, rank, header.bytes),
                 {.backend = "env", .operation = "bootstrap all_gather", .rank = 0, .peer = rank}));
    }
    std::vector<std::byte> payload(expected);
    if (receive_exact(socket, payload, deadline) != TransferEnd::done) {
      fail(Error(ErrorCode::peer_failure, fmt::format("bootstrap all_gather: rank {} hung up mid-message", rank),
                 {.backend = "env", .operation = "bootstrap all_gather", .rank = 0, .peer = rank}));
    }
    return payload;
  }

  /// Tells every connected rank (and `also`) that the round failed with `error`, keeps it for
  /// later calls, and throws it.
  [[noreturn]] void fail(const Error& error, const TcpSocket* also = nullptr) {
    const std::string& text = error.message();
    const StarFrame header{.kind = StarFrame::failure, .value = static_cast<std::int32_t>(error.code()), .round = round_};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{500};
    for (const auto& socket : ranks_) {
      if (socket.valid()) (void)send_frame(socket, header, std::as_bytes(std::span(text)), deadline);
    }
    if (also != nullptr) (void)send_frame(*also, header, std::as_bytes(std::span(text)), deadline);
    failure_ = error;
    throw error;
  }

  int size_;
  TcpSocket listener_;
  std::chrono::milliseconds timeout_;
  std::vector<TcpSocket> ranks_;      ///< by rank; empty until it has said hello
  std::vector<TcpSocket> strangers_;  ///< accepted, not yet said who they are
  std::uint64_t round_ = 0;
  std::optional<Error> failure_;
};

}  // namespace

std::unique_ptr<StarExchange> make_star_server(int size, TcpSocket listener, std::chrono::milliseconds timeout) {
  return std::make_unique<StarServer>(size, std::move(listener), timeout);
}

}  // namespace meshcomm::detail
