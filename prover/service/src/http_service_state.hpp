// The state an http_service shares between its listener (http_service.cpp) and its connections
// (http_connection.cpp): the acceptors, the open connections and their slots, and the job API that
// answers what the connections read. Private to the service's sources.
#pragma once

#include "coprove/service/http_service.hpp"
#include "coprove/service/job_api.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/basic_stream.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace coprove::service {

using local_protocol = boost::asio::local::stream_protocol;
using tcp = boost::asio::ip::tcp;
using unix_stream = boost::beast::basic_stream<local_protocol, boost::asio::any_io_executor>;
using tcp_stream = boost::beast::basic_stream<tcp, boost::asio::any_io_executor>;

/// Logs what ended a connection's (or the accept loop's) coroutine; never rethrows into the event
/// loop, which would end the process and every job in flight.
void log_connection_end(std::exception_ptr error) noexcept;

struct http_service::state : std::enable_shared_from_this<state> {
  state(boost::asio::any_io_executor ex, engine::engine& e, http_service_config c)
      : executor(std::move(ex)), eng(e), cfg(std::move(c)) {}

  boost::asio::any_io_executor executor;
  engine::engine& eng;
  http_service_config cfg;
  std::optional<local_protocol::acceptor> unix_acceptor;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::string bound;
  /// Made once the address is bound (the exposure checks need the port the system picked).
  std::optional<job_api> api;
  std::uint64_t next_connection = 0;
  std::uint64_t served = 0;
  // An open connection: how to close it, its peer (TCP: the remote address; empty on the Unix
  // socket) and whether it is waiting for or reading a request (and may give its slot up).
  struct connection {
    std::function<void()> close;
    std::string peer;
    bool reading = true;
  };
  std::map<std::uint64_t, connection> connections;  // by number: the oldest first
  std::uint64_t evicted = 0;

  bool accepting() const noexcept { return api && api->accepting(); }
  bool stopping() const noexcept { return api && api->stopping(); }
  /// What a body may hold: the JSON limit, or a witness file of the largest circuit.
  std::size_t read_limit() const noexcept {
    return std::max(cfg.limits.max_body_bytes, cfg.limits.max_witness_body_bytes);
  }

  // http_service.cpp: the listener.
  void bind();
  template <class Acceptor>
  boost::asio::awaitable<void> accept_loop(Acceptor& acceptor);
  bool make_room(const std::string& peer, unsigned& status, std::string& why);
  void close_all();

  // http_connection.cpp: one connection, instantiated for unix_stream and tcp_stream.
  template <class Stream>
  boost::asio::awaitable<void> serve_connection(Stream stream, std::uint64_t number, std::string peer);
};

}  // namespace coprove::service
