#pragma once

// TCP sockets for the setup exchanges of launchers without a key-value store of their own:
// every call is bounded by a deadline.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace meshcomm::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

/// An owned socket descriptor; -1 when empty.
class TcpSocket {
 public:
  TcpSocket() noexcept = default;
  explicit TcpSocket(int descriptor) noexcept : descriptor_(descriptor) {}
  TcpSocket(TcpSocket&& other) noexcept : descriptor_(other.release()) {}
  TcpSocket& operator=(TcpSocket&& other) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;
  ~TcpSocket();

  [[nodiscard]] int get() const noexcept { return descriptor_; }
  [[nodiscard]] bool valid() const noexcept { return descriptor_ >= 0; }
  int release() noexcept;

 private:
  int descriptor_ = -1;
};

/// How a bounded send or receive ended.
enum class TransferEnd { done, closed, timed_out };

/// A socket listening on `port` of every local address. Throws Error(backend_failure) naming the
/// port and `variable` (the setting that chose it) if it cannot be bound.
TcpSocket listen_on(std::uint16_t port, std::string_view variable);

/// Accepts one pending connection, or returns an empty socket if none is pending.
TcpSocket accept_from(const TcpSocket& listener);

/// Connects to `host`:`port`, retrying while nothing listens there yet; an empty socket once
/// `deadline` passes. Throws Error(invalid_argument) naming `host` if it does not resolve.
TcpSocket connect_to(const std::string& host, std::uint16_t port, SteadyTime deadline);

/// Sends every byte of `data`, or says why not.
TransferEnd send_all(const TcpSocket& socket, std::span<const std::byte> data, SteadyTime deadline);

/// Receives exactly `data.size()` bytes, or says why not.
TransferEnd receive_exact(const TcpSocket& socket, std::span<std::byte> data, SteadyTime deadline);

/// Waits until `socket` has something to read (or was closed) or `deadline` passes.
bool readable_before(const TcpSocket& socket, SteadyTime deadline);

}  // namespace meshcomm::detail
