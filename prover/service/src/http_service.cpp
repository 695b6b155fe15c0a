// The HTTP service of `coprove serve`, its listener: binds the Unix socket or TCP address the
// exposure rules allow, accepts connections on the control executor and gives each a slot (or the
// slot of the oldest one that has not sent a whole request), and starts and stops the job API the
// connections (http_connection.cpp) hand their requests to.
#include "http_service_state.hpp"

#include "coprove/service/detail/request_metrics.hpp"

#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace coprove::service {

namespace asio = boost::asio;

namespace {

constexpr std::string_view channel = "http";

// A canned refusal written on a socket that will not be served (no slot for it), then closed.
template <class Socket>
void refuse_connection(Socket& socket, unsigned status, std::string_view code, const std::string& message) {
  const std::string body = error_body(code, message) + "\n";
  const std::string reason = status == 429 ? "Too Many Requests" : "Service Unavailable";
  const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                           "\r\nServer: coprove\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                           "Connection: close\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  (void)socket.write_some(asio::buffer(text), ignored);  // a fresh socket's send buffer takes it whole
  socket.shutdown(asio::socket_base::shutdown_both, ignored);
  socket.close(ignored);
  detail::count_request("unknown", status);
}

std::string peer_of(local_protocol::socket&) { return {}; }
std::string peer_of(tcp::socket& socket) {
  boost::system::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown") : endpoint.address().to_string();
}

}  // namespace

// The completion of a connection's (or the accept loop's) coroutine: whatever it threw ends that
// coroutine only, logged here.
void log_connection_end(std::exception_ptr error) noexcept {
  if (!error) return;
  try {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      COPROVE_LOG(error, channel) << "connection ended by an exception: " << e.what();
    }
  } catch (...) {
    // An unknown exception, or logging failed: the coroutine is over either way.
  }
}

void http_service::state::bind() {
  check_listen_policy(cfg.listen, cfg.allow_remote, cfg.auth_token);
  if (cfg.listen.is_unix()) {
    const std::string& path = cfg.listen.path;
    if (check_socket_path(path)) {
      local_protocol::socket probe(executor);
      boost::system::error_code probe_ec;
      probe.connect(local_protocol::endpoint(path), probe_ec);
      if (!probe_ec) {
        throw std::system_error(std::make_error_code(std::errc::address_in_use), "another server is listening on " + path);
      }
      std::error_code fs_ec;
      std::filesystem::remove(path, fs_ec);  // a stale socket left by a process that did not exit cleanly
    }
    unix_acceptor.emplace(executor);
    const local_protocol::endpoint endpoint(path);
    boost::system::error_code ec;
    unix_acceptor->open(endpoint.protocol(), ec);
    if (!ec) unix_acceptor->bind(endpoint, ec);
    // The mode is set before listen(): until then a connect is refused, so no client reaches the
    // socket while it still has the mode the umask gave it.
    if (!ec && ::chmod(path.c_str(), static_cast<mode_t>(cfg.socket_mode)) != 0)
      ec = boost::system::error_code(errno, boost::system::generic_category());
    if (!ec) unix_acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    bound = cfg.listen.to_string();
  } else {
    // Every failure here (the port in use, no permission, an address this host does not have) is
    // a std::system_error naming the address, which the caller reports as a configuration error.
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(cfg.listen.host, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    const tcp::endpoint endpoint(address, cfg.listen.port);
    tcp_acceptor.emplace(executor);
    tcp_acceptor->open(endpoint.protocol(), ec);
    if (!ec) tcp_acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) tcp_acceptor->bind(endpoint, ec);
    if (!ec) tcp_acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    listen_address actual = cfg.listen;
    actual.port = tcp_acceptor->local_endpoint().port();
    bound = actual.to_string();
  }
  job_api_config api_cfg;
  api_cfg.limits = cfg.limits;
  api_cfg.defaults = cfg.defaults;
  api_cfg.retry_after_seconds = cfg.retry_after_seconds;
  api_cfg.key_roots = cfg.key_roots;
  api_cfg.key_loader = cfg.key_loader;
  api.emplace(executor, eng, std::move(api_cfg),
              exposure_policy(cfg.listen, bound, cfg.allowed_hosts, cfg.allowed_origins, cfg.auth_token));
  api->set_service_figures([this] {
    return boost::json::object{{"open_connections", connections.size()},
                               {"connections_evicted", evicted},
                               {"requests_served", served}};
  });
}

template <class Acceptor>
asio::awaitable<void> http_service::state::accept_loop(Acceptor& acceptor) {
  auto self = shared_from_this();
  while (accepting()) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) {
      if (ec == asio::error::operation_aborted || !accepting()) break;
      COPROVE_LOG(warning, channel) << "accept failed: " << ec.message();
      continue;
    }
    std::string peer = peer_of(socket);
    unsigned status = 0;
    std::string why;
    if (!make_room(peer, status, why)) {
      COPROVE_LOG(debug, channel) << "connection from " << (peer.empty() ? "the Unix socket" : peer) << " refused: " << why;
      refuse_connection(socket, status, "too_many_connections", why);
      continue;
    }
    using stream_type = boost::beast::basic_stream<typename Acceptor::protocol_type, asio::any_io_executor>;
    const std::uint64_t number = next_connection++;
    asio::co_spawn(executor, serve_connection(stream_type(std::move(socket)), number, std::move(peer)),
                   log_connection_end);
  }
}

// A slot for a new connection from `peer`: under the per-peer limit (TCP) and the total limit,
// each reached limit taking the slot of the oldest connection that has not sent a whole request
// (idle keep-alive or slow: slow-loris cannot hold slots against clients that send requests).
// False, with the status and reason to answer, when every connection that counts is busy.
bool http_service::state::make_room(const std::string& peer, unsigned& status, std::string& why) {
  const auto evict_oldest_reading = [&](const std::string* of_peer) {
    for (auto it = connections.begin(); it != connections.end(); ++it) {
      if (!it->second.reading || (of_peer && it->second.peer != *of_peer)) continue;
      auto close = std::move(it->second.close);
      connections.erase(it);  // the slot is free now; the coroutine ends when its read fails
      ++evicted;
      runtime::registry::global()
          .get_counter("coprove_http_connections_evicted_total",
                       "Connections closed before a whole request to make room for a new one")
          .inc();
      close();
      return true;
    }
    return false;
  };
  if (!peer.empty()) {
    std::size_t mine = 0;
    for (const auto& [number, c] : connections) mine += c.peer == peer ? 1 : 0;
    if (mine >= cfg.max_connections_per_peer && !evict_oldest_reading(&peer)) {
      status = 429;
      why = "this address holds " + std::to_string(mine) +
            " connections, each answering a request, as many as server.max_connections_per_peer = " +
            std::to_string(cfg.max_connections_per_peer) + " allows";
      return false;
    }
  }
  if (connections.size() >= cfg.max_connections && !evict_oldest_reading(nullptr)) {
    status = 503;
    why = "all " + std::to_string(connections.size()) +
          " connections are answering requests, as many as server.max_connections = " +
          std::to_string(cfg.max_connections) + " allows";
    return false;
  }
  return true;
}

void http_service::state::close_all() {
  std::vector<std::function<void()>> pending;  // closing runs no handler inline; copied anyway
  for (auto& [number, c] : connections) pending.push_back(c.close);
  for (auto& close : pending) close();
}

http_service::http_service(asio::any_io_executor control, engine::engine& engine, http_service_config cfg)
    : state_(std::make_shared<state>(std::move(control), engine, std::move(cfg))) {
  state_->bind();
}

http_service::~http_service() {
  stop_accepting();
  state_->close_all();
  if (state_->cfg.listen.is_unix()) {
    std::error_code ignored;
    std::filesystem::remove(state_->cfg.listen.path, ignored);
  }
}

void http_service::start() {
  if (state_->accepting()) return;
  state_->api->start();
  if (state_->unix_acceptor) {
    asio::co_spawn(state_->executor, state_->accept_loop(*state_->unix_acceptor), log_connection_end);
  } else {
    asio::co_spawn(state_->executor, state_->accept_loop(*state_->tcp_acceptor), log_connection_end);
  }
  COPROVE_LOG(info, channel) << "listening on " << state_->bound;
}

void http_service::stop_accepting() {
  state_->api->stop();
  boost::system::error_code ignored;
  if (state_->unix_acceptor) state_->unix_acceptor->close(ignored);
  if (state_->tcp_acceptor) state_->tcp_acceptor->close(ignored);
}

void http_service::close_connections() { state_->close_all(); }

std::string http_service::local_address() const { return state_->bound; }
std::size_t http_service::open_connections() const noexcept { return state_->connections.size(); }
std::uint64_t http_service::requests_served() const noexcept { return state_->served; }

}  // namespace coprove::service
