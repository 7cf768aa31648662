#pragma once

// The setup exchange of EnvBootstrap: every rank connects to rank 0, which gathers each round's
// contributions and sends the whole back, or sends every rank the error that ended the round
// (naming the ranks that never arrived, or the one that gave the wrong size or hung up).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "meshcomm/error.hpp"
#include "tcp_socket.hpp"

namespace meshcomm::detail {

/// The header of every message between rank 0 and another rank.
struct StarFrame {
  enum Kind : std::uint32_t { hello = 0x4d430001, contribution, result, failure };
  std::uint32_t kind = hello;
  std::int32_t value = 0;    ///< hello: the sender's rank; failure: the ErrorCode
  std::uint64_t round = 0;   ///< hello: the world size the sender was given
  std::uint64_t bytes = 0;   ///< of the payload that follows
};

/// One rank's side of the exchange.
class StarExchange {
 public:
  virtual ~StarExchange() = default;
  /// Gathers `mine` from every rank in rank order; throws the round's Error on every rank.
  virtual std::vector<std::byte> all_gather(std::span<const std::byte> mine) = 0;
};

/// Rank 0: gathers over `listener` from the `size - 1` others; each round waits at most `timeout`.
std::unique_ptr<StarExchange> make_star_server(int size, TcpSocket listener, std::chrono::milliseconds timeout);

/// Rank `rank` ≥ 1: connects to rank 0 at `host`:`port` at its first round.
std::unique_ptr<StarExchange> make_star_client(int rank, int size, std::string host, std::uint16_t port,
                                               std::chrono::milliseconds timeout);

/// Sends `header` (with `payload.size()` as its size) and `payload`.
TransferEnd send_frame(const TcpSocket& socket, StarFrame header, std::span<const std::byte> payload,
                       SteadyTime deadline);

/// The error a failure frame carries.
Error error_from_failure(const StarFrame& header, std::span<const std::byte> payload, int rank);

}  // namespace meshcomm::detail
