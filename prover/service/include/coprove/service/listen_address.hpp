// Where `coprove serve` listens: a Unix socket path or a TCP address, parsed from the text of
// server.listen, and the default socket path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace coprove::service {

/// Where the service listens: "unix:PATH", or "HOST:PORT" with an IPv4 literal, "[IPv6]" or
/// "localhost" (port 0 picks a free port).
struct listen_address {
  bool unix_socket = true;
  std::string path;  ///< unix: the socket file
  std::string host;  ///< tcp: the address literal
  std::uint16_t port = 0;

  bool is_unix() const noexcept { return unix_socket; }
  /// True for a Unix socket or a loopback TCP address.
  bool is_loopback() const;
  std::string to_string() const;
};

/// Parses a listen address; throws std::invalid_argument saying what is wrong with it.
listen_address parse_listen_address(std::string_view text);

/// The Unix socket `coprove serve` listens on when none is configured:
/// unix:$XDG_RUNTIME_DIR/coprove.sock, or unix:/run/coprove/coprove.sock without XDG_RUNTIME_DIR.
std::string default_listen_address();

}  // namespace coprove::service
