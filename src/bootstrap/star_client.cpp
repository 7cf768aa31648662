#include <algorithm>

#include <fmt/format.h>

#include "arrivals.hpp"
#include "star_exchange.hpp"

namespace meshcomm::detail {

namespace {

/// A rank other than 0: one connection to rank 0, made at the first round.
class StarClient final : public StarExchange {
 public:
  StarClient(int rank, int size, std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
      : rank_(rank), size_(size), host_(std::move(host)), port_(port), timeout_(timeout) {}

  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    if (!server_.valid()) connect(deadline);
    const StarFrame header{.kind = StarFrame::contribution, .value = rank_, .round = round_};
    if (send_frame(server_, header, mine, deadline) != TransferEnd::done) throw hung_up();
    // Rank 0 decides the round (it knows who is missing): give it a little longer than its own timeout.
    const auto verdict_deadline = deadline + std::max(std::chrono::milliseconds{1000}, timeout_ / 4);
    StarFrame answer;
    const auto end = receive_exact(server_, std::as_writable_bytes(std::span(&answer, 1)), verdict_deadline);
    // Rank 0 answers every round it takes part in by its timeout: silence means it never arrived.
    if (end == TransferEnd::timed_out) throw arrival_timeout("env", "all_gather", rank_, timeout_, std::vector{0});
    if (end == TransferEnd::closed || (answer.kind != StarFrame::result && answer.kind != StarFrame::failure) ||
        answer.bytes > (std::uint64_t{1} << 40)) {
      throw hung_up();
    }
    std::vector<std::byte> payload(answer.bytes);
    if (receive_exact(server_, payload, verdict_deadline) != TransferEnd::done) throw hung_up();
    if (answer.kind == StarFrame::failure) throw error_from_failure(answer, payload, rank_);
    ++round_;
    return payload;
  }

 private:
  void connect(SteadyTime deadline) {
    server_ = connect_to(host_, port_, deadline);
    if (!server_.valid()) {
      throw Error(ErrorCode::timeout,
                  fmt::format("bootstrap all_gather did not complete within {} ms: rank 0 never arrived (nothing "
                              "accepted a connection at {}:{})",
                              timeout_.count(), host_, port_),
                  {.backend = "env", .operation = "bootstrap connect", .rank = rank_, .peer = 0});
    }
    const StarFrame hello{.kind = StarFrame::hello, .value = rank_, .round = static_cast<std::uint64_t>(size_)};
    if (send_frame(server_, hello, {}, deadline) != TransferEnd::done) throw hung_up();
  }

  [[nodiscard]] Error hung_up() const {
    return Error(ErrorCode::peer_failure,
                 fmt::format("bootstrap all_gather: rank 0 ({}:{}) hung up: its process ended or gave up", host_, port_),
                 {.backend = "env", .operation = "bootstrap all_gather", .rank = rank_, .peer = 0});
  }

  int rank_;
  int size_;
  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  TcpSocket server_;
  std::uint64_t round_ = 0;
};

}  // namespace

std::unique_ptr<StarExchange> make_star_client(int rank, int size, std::string host, std::uint16_t port,
                                               std::chrono::milliseconds timeout) {
  return std::make_unique<StarClient>(rank, size, std::move(host), port, timeout);
}

TransferEnd send_frame(const TcpSocket& socket, StarFrame header, std::span<const std::byte> payload,
                       SteadyTime deadline) {
  header.bytes = payload.size();
  const auto end = send_all(socket, std::as_bytes(std::span(&header, 1)), deadline);
  return end == TransferEnd::done ? send_all(socket, payload, deadline) : end;
}

Error error_from_failure(const StarFrame& header, std::span<const std::byte> payload, int rank) {
  const auto code = header.value >= 0 && header.value <= static_cast<std::int32_t>(ErrorCode::internal)
                        ? static_cast<ErrorCode>(header.value)
                        : ErrorCode::internal;
  return Error(code, std::string(reinterpret_cast<const char*>(payload.data()), payload.size()),
               {.backend = "env", .operation = "bootstrap all_gather", .rank = rank});
}

}  // namespace meshcomm::detail
