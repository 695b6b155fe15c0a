// An in-process `coprove serve`: an engine on the host backend (evaluation records, small
// circuits), the HTTP service on a Unix socket in a scratch directory or on loopback TCP, and a
// blocking client that writes raw bytes and reads one response with Beast.
#pragma once

#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <coprove/service/http_service.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>

namespace coprove::test {

struct reply {
  unsigned status = 0;
  boost::beast::http::response<boost::beast::http::string_body> message;
  std::string body() const { return message.body(); }
  boost::json::value json() const { return boost::json::parse(message.body()); }
  std::string header(boost::beast::http::field f) const { return std::string(message[f]); }
};

/// One client connection; reads time out after `limit` so that a test never hangs on a server.
template <class Protocol>
class client {
 public:
  client(boost::asio::io_context& io, const typename Protocol::endpoint& at,
         std::chrono::milliseconds limit = std::chrono::seconds(10))
      : socket_(io) {
    socket_.connect(at);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(limit.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((limit.count() % 1000) * 1000);
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  void send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  /// Reads one response; status 0 when the server closed (or the read timed out) first.
  reply read() {
    reply r;
    boost::system::error_code ec;
    boost::beast::http::read(socket_, buffer_, r.message, ec);
    if (!ec) r.status = r.message.result_int();
    return r;
  }
  reply exchange(const std::string& bytes) {
    send(bytes);
    return read();
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  typename Protocol::socket& socket() { return socket_; }

 private:
  typename Protocol::socket socket_;
  boost::beast::flat_buffer buffer_;
};

/// A request's bytes: method, target, extra header lines (each ending in \r\n) and a body.
inline std::string http_request(const std::string& method, const std::string& target, const std::string& headers = {},
                                const std::optional<std::string>& body = std::nullopt,
                                const std::string& host = "localhost") {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers;
  if (body) out += "Content-Length: " + std::to_string(body->size()) + "\r\n";
  out += "\r\n";
  if (body) out += *body;
  return out;
}

inline std::string json_post(const std::string& body, const std::string& headers = {},
                             const std::string& host = "localhost") {
  return http_request("POST", "/v1/jobs", "Content-Type: application/json\r\n" + headers, body, host);
}

/// The engine and the service, both on one io_context thread; torn down in order.
class service_under_test {
 public:
  /// `adjust` edits the engine and service configuration before they are built.
  template <class Adjust>
  explicit service_under_test(Adjust adjust, bool tcp = false) {
    char pattern[] = "/tmp/coprove-service-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    dir_ = pattern;
    engine::engine_config ecfg = record_engine_config(10);
    ecfg.synthesis_hook = [this](std::uint64_t, std::size_t) { gate.pass(); };
    service::http_service_config scfg;
    scfg.listen = service::parse_listen_address(tcp ? "127.0.0.1:0" : "unix:" + dir_ + "/s.sock");
    scfg.defaults.log_constraints = 10;
    scfg.defaults.partitions = 1;
    adjust(ecfg, scfg);
    engine_ = std::make_unique<engine::engine>(rt_.io.get_executor(), ecfg, std::make_unique<engine::host_backend>(1, 2));
    on_io([&] {
      service_ = std::make_unique<service::http_service>(rt_.io.get_executor(), *engine_, scfg);
      service_->start();
    });
    address_ = service_->local_address();
  }
  ~service_under_test() {
    gate.release();
    on_io([&] { service_.reset(); });
    auto done = engine_->async_shutdown(false, boost::asio::use_future);
    done.get();
    engine_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  /// Runs f on the io thread and waits for it (rethrowing what it threw).
  template <class F>
  void on_io(F f) {
    std::promise<void> done;
    boost::asio::post(rt_.io, [&] {
      try {
        f();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    });
    done.get_future().get();
  }

  bool tcp() const { return address_.rfind("unix:", 0) != 0; }
  std::string host_header() const { return address_; }
  std::string socket_path() const { return dir_ + "/s.sock"; }
  const std::string& dir() const { return dir_; }
  std::uint16_t port() const { return static_cast<std::uint16_t>(std::stoi(address_.substr(address_.rfind(':') + 1))); }

  client<boost::asio::local::stream_protocol> unix_client(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    return {io_, boost::asio::local::stream_protocol::endpoint(socket_path()), limit};
  }
  client<boost::asio::ip::tcp> tcp_client(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    return {io_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port()), limit};
  }
  /// One request on a fresh connection.
  reply request(const std::string& bytes) {
    if (tcp()) return tcp_client().exchange(bytes);
    return unix_client().exchange(bytes);
  }
  boost::json::value status() {
    const auto r = request(http_request("GET", "/v1/status", auth_header, std::nullopt, host_header()));
    REQUIRE(r.status == 200);
    return r.json();
  }
  std::size_t open_connections() {
    return status().at("service").at("open_connections").to_number<std::size_t>();
  }

  engine::engine& engine() { return *engine_; }
  service::http_service& service() { return *service_; }
  boost::asio::any_io_executor executor() { return rt_.io.get_executor(); }
  synthesis_gate gate;
  std::string auth_header;  // sent by status()

 private:
  std::string dir_;
  std::string address_;
  boost::asio::io_context io_;  // the clients' (blocking) sockets
  running_io rt_;
  std::unique_ptr<engine::engine> engine_;
  std::unique_ptr<service::http_service> service_;
};

}  // namespace coprove::test
