// The HTTP/1.1 + JSON service of `coprove serve`: accepts connections on a Unix socket or a TCP
// address and answers their requests with the job API (job_api.hpp), which drives the engine.
// Every handler runs on the control executor (coroutines), so that engine state needs no locks.
// Boost.Beast stays in the service's sources (the listener and the connection); this header only
// names what a caller configures and controls.
#pragma once

#include <coprove/service/listen_address.hpp>
#include <coprove/service/request_parser.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::engine {
class engine;
struct key_source;
}  // namespace coprove::engine

namespace coprove::service {

struct http_service_config {
  listen_address listen;
  bool allow_remote = false;  ///< required to bind a non-loopback TCP address
  request_limits limits;      ///< body size, wait limit and request ranges
  job_request defaults;       ///< fields a POST /v1/jobs body leaves out
  /// Connections served at once. When all are taken a new one takes the slot of the oldest
  /// connection that has not sent a whole request (idle or slow); with none such it gets 503.
  std::size_t max_connections = 64;
  /// TCP connections one remote address may hold (the same rule; 429 when none can be taken).
  std::size_t max_connections_per_peer = 16;
  double idle_timeout_seconds = 60.0;    ///< a keep-alive connection idle this long is closed
  double header_timeout_seconds = 10.0;  ///< from a request's first byte to its whole header; then 408
  double body_timeout_seconds = 30.0;    ///< from the header to the whole body; then 408
  unsigned retry_after_seconds = 5;      ///< the Retry-After of a 429 queue_full
  /// TCP: the Host names accepted besides the listen address (and localhost on loopback); the port,
  /// where given, must be the one listened on.
  std::vector<std::string> allowed_hosts;
  /// Origin header values accepted; a request with any other Origin gets 403.
  std::vector<std::string> allowed_origins;
  /// Non-empty: every request but GET /healthz needs `Authorization: Bearer <token>` (401 otherwise).
  std::string auth_token;
  /// Unix socket: the socket file's mode, set before it accepts anything.
  unsigned socket_mode = 0600;
  /// server.key_roots and the composition root's key reader: see job_api_config.
  std::vector<std::filesystem::path> key_roots;
  std::function<engine::key_source(const std::filesystem::path&)> key_loader;
};

/// The HTTP API over an engine. Not thread-safe: construct, start and stop it on the control
/// executor's thread (the thread running the io_context), which is where its handlers run.
class http_service {
 public:
  /// Binds the listening socket (a stale Unix socket file is replaced; a live one is an error).
  /// Throws std::invalid_argument for a non-loopback address without allow_remote and
  /// std::system_error when binding fails.
  http_service(boost::asio::any_io_executor control, engine::engine& engine, http_service_config cfg);
  /// Closes everything; the Unix socket file is removed.
  ~http_service();
  http_service(const http_service&) = delete;
  http_service& operator=(const http_service&) = delete;

  /// Starts accepting connections.
  void start();
  /// Stops accepting; open connections are still served, new job submissions get 503.
  void stop_accepting();
  /// Closes every connection now (a request being answered is abandoned).
  void close_connections();

  /// The bound address, with the port the system picked when 0 was asked for.
  std::string local_address() const;
  std::size_t open_connections() const noexcept;
  std::uint64_t requests_served() const noexcept;

  struct state;

 private:
  std::shared_ptr<state> state_;
};

}  // namespace coprove::service
