#include "tcp_socket.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

namespace {

/// Milliseconds left until `deadline`, for poll (0 once it has passed).
int milliseconds_until(SteadyTime deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1'000'000));
}

/// Waits for `events` on `socket` until `deadline`; false if it passed first.
bool wait_for(const TcpSocket& socket, short events, SteadyTime deadline) {
  while (true) {
    pollfd entry{.fd = socket.get(), .events = events, .revents = 0};
    const int ready = ::poll(&entry, 1, milliseconds_until(deadline));
    if (ready > 0) return true;
    if (ready == 0 || errno != EINTR) return false;
  }
}

void set_no_delay(int descriptor) {
  const int on = 1;
  (void)::setsockopt(descriptor, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace

TcpSocket& TcpSocket::operator=(TcpSocket&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = other.release();
  }
  return *this;
}

TcpSocket::~TcpSocket() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

int TcpSocket::release() noexcept {
  const int descriptor = descriptor_;
  descriptor_ = -1;
  return descriptor;
}

TcpSocket listen_on(std::uint16_t port, std::string_view variable) {
  TcpSocket listener(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const bool dual_stack = listener.valid();
  if (!dual_stack) listener = TcpSocket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto failure = [&](const char* call) {
    return Error(ErrorCode::backend_failure,
                 fmt::format("bootstrap: cannot listen on port {} (from {}): {} failed: {}; choose a free port with "
                             "MESHCOMM_BOOTSTRAP_PORT",
                             port, variable, call, std::strerror(errno)),
                 {.backend = "env", .operation = "bootstrap listen"});
  };
  if (!listener.valid()) throw failure("socket");
  const int on = 1;
  (void)::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  int bound = -1;
  if (dual_stack) {
    const int off = 0;
    (void)::setsockopt(listener.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(port);
    bound = ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(port);
    bound = ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  }
  if (bound != 0) throw failure("bind");
  if (::listen(listener.get(), SOMAXCONN) != 0) throw failure("listen");
  (void)::fcntl(listener.get(), F_SETFL, ::fcntl(listener.get(), F_GETFL) | O_NONBLOCK);
  return listener;
}

TcpSocket accept_from(const TcpSocket& listener) {
  TcpSocket accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (accepted.valid()) set_no_delay(accepted.get());
  return accepted;
}

TcpSocket connect_to(const std::string& host, std::uint16_t port, SteadyTime deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); status != 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("bootstrap: MASTER_ADDR = '{}' does not resolve: {}", host, ::gai_strerror(status)),
                {.backend = "env", .operation = "bootstrap connect"});
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  auto pause = std::chrono::milliseconds{10};
  while (true) {
    for (const addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
      TcpSocket attempt(::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol));
      if (!attempt.valid()) continue;
      if (::connect(attempt.get(), address->ai_addr, address->ai_addrlen) == 0) {
        set_no_delay(attempt.get());
        return attempt;
      }
    }
    if (std::chrono::steady_clock::now() + pause >= deadline) return {};
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{200});
  }
}

TransferEnd send_all(const TcpSocket& socket, std::span<const std::byte> data, SteadyTime deadline) {
  while (!data.empty()) {
    const ssize_t sent = ::send(socket.get(), data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      data = data.subspan(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(socket, POLLOUT, deadline)) return TransferEnd::timed_out;
      continue;
    }
    return TransferEnd::closed;
  }
  return TransferEnd::done;
}

TransferEnd receive_exact(const TcpSocket& socket, std::span<std::byte> data, SteadyTime deadline) {
  while (!data.empty()) {
    const ssize_t received = ::recv(socket.get(), data.data(), data.size(), MSG_DONTWAIT);
    if (received > 0) {
      data = data.subspan(static_cast<std::size_t>(received));
      continue;
    }
    if (received == 0) return TransferEnd::closed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(socket, POLLIN, deadline)) return TransferEnd::timed_out;
      continue;
    }
    return TransferEnd::closed;
  }
  return TransferEnd::done;
}

bool readable_before(const TcpSocket& socket, SteadyTime deadline) { return wait_for(socket, POLLIN, deadline); }

}  // namespace meshcomm::detail
