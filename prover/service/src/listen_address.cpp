// Listen addresses: "unix:PATH" or "HOST:PORT" parsed into what the listener binds, with the
// messages a bad server.listen gets.
#include "coprove/service/listen_address.hpp"

#include <boost/asio/ip/address.hpp>

#include <cstdlib>
#include <stdexcept>

namespace coprove::service {

namespace asio = boost::asio;

namespace {

bool parse_port(std::string_view text, std::uint16_t& port) {
  if (text.empty() || text.size() > 5) return false;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

}  // namespace

std::string default_listen_address() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] == '/') return "unix:" + std::string(runtime_dir) + "/coprove.sock";
  return "unix:/run/coprove/coprove.sock";
}

bool listen_address::is_loopback() const {
  if (unix_socket) return true;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

std::string listen_address::to_string() const {
  if (unix_socket) return "unix:" + path;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

listen_address parse_listen_address(std::string_view text) {
  listen_address out;
  constexpr std::string_view unix_prefix = "unix:";
  if (text.substr(0, unix_prefix.size()) == unix_prefix) {
    out.unix_socket = true;
    out.path = std::string(text.substr(unix_prefix.size()));
    if (out.path.empty()) throw std::invalid_argument("listen address 'unix:' needs a socket path");
    // sockaddr_un::sun_path holds 108 bytes including the terminator.
    if (out.path.size() > 107) {
      throw std::invalid_argument("Unix socket path '" + out.path + "' is longer than 107 bytes");
    }
    return out;
  }
  out.unix_socket = false;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw std::invalid_argument("listen address '" + std::string(text) + "': expected [IPv6]:PORT");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      throw std::invalid_argument("listen address '" + std::string(text) + "': expected unix:PATH or HOST:PORT");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (!parse_port(port, out.port)) {
    throw std::invalid_argument("listen address '" + std::string(text) + "': port must be a number in [0, 65535]");
  }
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(std::string(host), ec);
  if (ec) {
    throw std::invalid_argument("listen address '" + std::string(text) + "': '" + std::string(host) +
                                "' is not an IP address (use an address literal or localhost)");
  }
  out.host = address.to_string();
  return out;
}

}  // namespace coprove::service
